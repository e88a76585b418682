# lbbench: see README.md.
GO      ?= go
BIN     := bin/lbbench
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -X main.commit=$(COMMIT)
OUT     ?= reports/out/latest

.PHONY: build setup test test-short bench-compare fmt-check vet clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lbbench

## setup: install nginx, HAProxy, Chromium and wrk from Debian's packages when missing.
setup:
	bash scripts/setup.sh

## test: everything CI runs: setup, format, vet, then every test.
test: setup fmt-check vet
	$(GO) test -count=1 -timeout 14m ./...

## test-short: the quick loop, under a minute.
test-short:
	$(GO) test -short -count=1 ./...

## bench-compare: the main job on the embedded default scenario, local processes.
bench-compare: build
	rm -rf $(OUT)
	./$(BIN) run -o $(OUT) $(SCENARIO)

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

clean:
	rm -rf bin reports/out
