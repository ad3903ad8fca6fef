# The front door. Every target installs what it needs; see README.md.
SHELL := /usr/bin/env bash
GO    ?= go
PKGS  ?= ./...

.PHONY: test bench lint fuzz

## test: every test, with DynamoDB Local and fauxqs started for the run and stopped after it
test:
	infra/emulators.sh $(GO) test -race -count=1 $(PKGS)

## bench: the engine benchmarks against DynamoDB Local (figures printed, see README)
bench:
	infra/emulators.sh $(GO) test -run '^$$' -bench . -benchtime 2000x -count 1 ./internal/...

## fuzz: fuzz the CloudEvents decoder (FUZZTIME=30s)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime $(FUZZTIME) ./internal/envelope/

## lint: gofmt and go vet
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) vet ./...
