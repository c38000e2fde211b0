# Till's developer commands. `make run` and `make test` are the two commands of the README.
GO ?= go
GOFMT ?= $(shell $(GO) env GOROOT)/bin/gofmt

.PHONY: run test generate generated bench build lint demo

# run builds first and execs the binary so Ctrl-C reaches Till alone and make exits cleanly.
run: build
	@exec ./bin/till serve

# demo seeds a demo organization into the same database `make run` uses and prints its tokens.
demo:
	@$(GO) build -o bin/till ./cmd/till
	@./bin/till demo

# test is the README's test command, which CI runs on a clean clone (.ci/run). Before the
# tests it fails on a file gofmt would change, on go vet's findings and on generated code
# that go generate would change (see generated). Among the tests, two guard the structure:
# internal/layering holds every import to the dependency rule, and rest/security's
# TestEveryRootFieldDeclaresOneGuard wants each GraphQL root field to declare exactly one
# guard (@hasScope, @portal, @billing, @public or @firstParty).
test: lint generated
	$(GO) test -count=1 ./...

generate:
	$(GO) generate ./...

# generated fails when go generate ./... would change graph/ or gqlgen's files in
# resolvers/. It needs no git and works alike on a clean clone and in a tree with
# uncommitted work: it generates in place (the checkout's build cache keeps that to
# seconds), compares with a snapshot taken just before, and puts the snapshot back, so the
# tree is left as it was found. It must not run while something else builds the tree.
generated:
	@$(GO) run ./internal/gqlexec/gencheck

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

build:
	$(GO) build -o bin/till ./cmd/till

# lint fails on a file gofmt would change (listing them) and on go vet's findings.
lint:
	@unformatted=$$($(GOFMT) -l .) || exit 1; \
	if [ -n "$$unformatted" ]; then echo "gofmt would change these files (run gofmt -w):"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
