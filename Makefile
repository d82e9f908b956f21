GO ?= go

.PHONY: build test bench fuzz controlplane cluster cluster-down
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
	$(GO) test -run '^$$' -fuzz FuzzParseConfig -fuzztime 30s ./internal/deviceplugin
	$(GO) test -run '^$$' -fuzz FuzzPreferred -fuzztime 30s ./internal/deviceplugin

# etcd, kube-apiserver, kubectl and kwok for the tests that need a control
# plane and for make cluster, built into $${GPUPLANE_CACHE:-$$HOME/.cache/gpuplane}/bin
# (about 15 minutes cold, then cached; docs/cluster.md).
controlplane:
	hack/build-controlplane.sh

# A local control plane with fake GPU nodes (NODES: an openb node CSV or a
# node YAML), in the background until make cluster-down. Prints
# export KUBECONFIG=...: eval "$$(make -s cluster)".
NODES ?= hack/cluster/nodes.yaml
CLUSTER_DIR ?= .cache/cluster
cluster:
	@hack/build-controlplane.sh >&2
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(CLUSTER_DIR)/cluster up --dir $(CLUSTER_DIR) --nodes $(NODES) $(CLUSTER_FLAGS)

cluster-down:
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(CLUSTER_DIR)/cluster down --dir $(CLUSTER_DIR)
