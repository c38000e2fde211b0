# Till's developer commands. `make run` and `make test` are the two commands of the README.
GO ?= go

.PHONY: run test generate bench build lint

run:
	$(GO) run ./cmd/till serve

test:
	$(GO) test -count=1 ./...

generate:
	$(GO) generate ./...

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

build:
	$(GO) build -o bin/till ./cmd/till

lint:
	gofmt -l . && $(GO) vet ./...
