# Till's developer commands. `make run` and `make test` are the two commands of the README.
GO ?= go

.PHONY: run test generate bench build lint demo

# run builds first and execs the binary so Ctrl-C reaches Till alone and make exits cleanly.
run: build
	@exec ./bin/till serve

# demo seeds a demo organization into the same database `make run` uses and prints its tokens.
demo:
	@$(GO) build -o bin/till ./cmd/till
	@./bin/till demo

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
