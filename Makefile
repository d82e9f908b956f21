GO ?= go

.PHONY: build test bench fuzz vet
build:
	$(GO) build -o bin/gpuplane ./cmd/gpuplane

test:
	$(GO) vet ./...
	$(GO) test ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
