GO ?= go

.PHONY: build test bench fuzz
build:
	$(GO) build -o bin/gpuplane ./cmd/gpuplane

# The README's test command: vet, then every test.
test:
	$(GO) vet ./...
	$(GO) test ./...

# Benchmarks; compare runs with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./...

# A short fuzzing pass over every parser; new corpus entries land in the
# package's testdata/fuzz.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReadPods -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadNodes -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadPrices -fuzztime 30s ./internal/gpu
	$(GO) test -run '^$$' -fuzz FuzzParseFields -fuzztime 30s ./internal/exporter
	$(GO) test -run '^$$' -fuzz FuzzParseLink -fuzztime 30s ./internal/device
	$(GO) test -run '^$$' -fuzz FuzzParseProfile -fuzztime 30s ./internal/device/mock
	$(GO) test -run '^$$' -fuzz FuzzParseFaults -fuzztime 30s ./internal/device/mock
	$(GO) test -run '^$$' -fuzz FuzzParseConfig -fuzztime 30s ./api/config/v1
	$(GO) test -run '^$$' -fuzz FuzzPreferred -fuzztime 30s ./internal/deviceplugin
