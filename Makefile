# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
GO ?= go
# Printed by `gpuplane version` and every binary's --version
# (internal/version); without them the Go toolchain's VCS stamp is used.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/gpuplane/gpuplane/internal/version.version=$(VERSION) \
	-X github.com/gpuplane/gpuplane/internal/version.commit=$(COMMIT)

# go-nvml's nvml.h marks many NVML functions DEPRECATED, and the cgo
# wrappers go-nvml generates for them made each build of the node agent
# print about 150 lines of -Wdeprecated-declarations (29 warnings). A
# `#cgo CFLAGS` line turns them off only in the package that has it, and
# these are compiled in go-nvml's own package, so the flag is given here,
# for every go command below (build, vet, test): Go's default CGO_CFLAGS,
# -O2 -g, and that warning off. One in the environment wins. `go run
# ./cmd/gpuplane` links no cgo and is unaffected; `make cgo-warnings`
# checks that the cgo packages compile without a word.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: build gpuplane cost node-agent scheduler webhook image lint-workflows test bench fuzz cold-build cgo-warnings controlplane roundtrip cluster cluster-down cluster-restart cluster-status
# Every binary under cmd/ into bin/: gpuplane (offline tools), gpuplane-cost
# (which gpuplane cost runs), and one per in-cluster role
# (gpuplane-node-agent, gpuplane-scheduler, gpuplane-webhook). The
# scheduler links kube-scheduler, by far the longest build: the targets
# below build one binary each, so the offline tool or the agent need not
# wait for it.
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/...

# bin/gpuplane: the offline tool (standard library, yaml.v3, no cgo).
gpuplane:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/gpuplane

# bin/gpuplane-cost, which `bin/gpuplane cost` runs from beside it.
cost:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/gpuplane-cost

# bin/gpuplane-node-agent (cgo: needs gcc; CGO_CFLAGS above keeps go-nvml quiet).
node-agent:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/gpuplane-node-agent

# bin/gpuplane-scheduler: kube-scheduler with gpuplane's plugins.
scheduler:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/gpuplane-scheduler

# bin/gpuplane-webhook.
webhook:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/ ./cmd/gpuplane-webhook

# bin/gpuplane-image.tar: the image of every role (the chart's
# image.repository, tagged with Chart.yaml's appVersion) as an OCI layout
# archive, built without a container runtime by hack/image from the Go
# modules and the Debian packages of hack/image/debian.lock; the same
# checkout gives the same digest (docs/image.md). PLATFORMS=linux/amd64,linux/arm64
# writes an index of both (a cross build of the agent needs CC_linux_arm64).
PLATFORMS ?=
image:
	$(GO) run ./hack/image --out bin/gpuplane-image.tar $(if $(PLATFORMS),--platform $(PLATFORMS))

# actionlint over .github/workflows (with shellcheck over their run:
# scripts where shellcheck is on PATH; .ci/run installs it), built once from
# the Go module proxy into $${GPUPLANE_CACHE:-$$HOME/.cache/gpuplane}/bin.
# .ci/run calls it.
ACTIONLINT_VERSION := v1.7.12
ACTIONLINT := $(or $(GPUPLANE_CACHE),$(HOME)/.cache/gpuplane)/bin/actionlint-$(ACTIONLINT_VERSION)
lint-workflows: $(ACTIONLINT)
	$(ACTIONLINT)

$(ACTIONLINT):
	tmp=$$(mktemp -d) && GOBIN=$$tmp $(GO) install github.com/rhysd/actionlint/cmd/actionlint@$(ACTIONLINT_VERSION) && \
		mkdir -p $(@D) && mv $$tmp/actionlint $@ && rmdir $$tmp

# The README's test command: vet, then every test.
test:
	$(GO) vet ./...
	$(GO) test -timeout 45m ./...

# Benchmark: the README's first command cold (empty GOCACHE), in wall and
# CPU seconds with the load average; fails only on a failed run or a
# compiler warning, never on time.
cold-build:
	hack/cold-build.sh

# Every cgo package that make build and make test compile (go-nvml's, and
# the standard library's net, os/user and runtime/cgo), compiled cold (a
# fresh GOCACHE: a cached package prints nothing) with CGO_CFLAGS above;
# fails on any compiler output, such as go-nvml's deprecation warnings.
# .ci/run calls it.
cgo-warnings:
	hack/cgo-warnings.sh

# Benchmarks; compare runs with benchstat.
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./...

# A short fuzzing pass over every parser; new corpus entries land in the
# package's testdata/fuzz.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzReadPods -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadNodes -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadAlibaba2025 -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadCluster -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz '^FuzzReadSnapshot$$' -fuzztime 30s ./internal/snapshot
	$(GO) test -run '^$$' -fuzz FuzzReadSnapshotDRA -fuzztime 30s ./internal/snapshot
	$(GO) test -run '^$$' -fuzz FuzzParseNodeSpec -fuzztime 30s ./internal/trace
	$(GO) test -run '^$$' -fuzz FuzzReadPrices -fuzztime 30s ./internal/cost/prices
	$(GO) test -run '^$$' -fuzz FuzzParseFields -fuzztime 30s ./internal/node/exporter
	$(GO) test -run '^$$' -fuzz FuzzParseLink -fuzztime 30s ./internal/node/device
	$(GO) test -run '^$$' -fuzz FuzzParseProfile -fuzztime 30s ./internal/node/device/mock
	$(GO) test -run '^$$' -fuzz FuzzParseFaults -fuzztime 30s ./internal/node/device/mock
	$(GO) test -run '^$$' -fuzz FuzzParseConfig -fuzztime 30s ./api/config/v1
	$(GO) test -run '^$$' -fuzz FuzzPreferred -fuzztime 30s ./internal/node/deviceplugin
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./internal/webhook/policy
	$(GO) test -run '^$$' -fuzz FuzzReadObjects -fuzztime 30s ./internal/webhook/policy
	$(GO) test -run '^$$' -fuzz FuzzParseOpenMetrics -fuzztime 30s ./internal/cost/source

# etcd, kube-apiserver, kubectl and kwok for the tests that need a control
# plane and for make cluster, built into $${GPUPLANE_CACHE:-$$HOME/.cache/gpuplane}/bin
# (about 15 minutes cold, then cached; docs/cluster.md).
controlplane:
	hack/build-controlplane.sh

# Issue 32's round trips: GPU Operator nodes on a real control plane, a
# workload placed by kube-scheduler's default profile and by
# gpuplane-scheduler's own, `kubectl get nodes,pods -A -o json` read back
# by simulate --snapshot; prints the agreement tables of
# docs/simulate-validation.md; and the same on DRA (about two minutes).
roundtrip:
	hack/build-controlplane.sh
	$(GO) test ./internal/sim/cli/ -run '^TestRoundTrip(RealControlPlane|GPUplaneProfile|DRA)$$' -count=1 -v

# A local control plane with fake GPU nodes (NODES: an openb node CSV or a
# cluster YAML) and gpuplane-scheduler (deploy/scheduler/config.yaml), in the
# background until make cluster-down. Prints
# export KUBECONFIG=...: eval "$$(make -s cluster)".
# KUBELET_NODES=N adds N real kubelet nodes (as root), each with a
# gpuplane-node-agent on the mock profile KUBELET_PROFILE; GPU_API=dra
# serves their GPUs through DRA (docs/cluster.md).
NODES ?= hack/cluster/nodes.yaml
CLUSTER_DIR ?= .cache/cluster
KUBELET_NODES ?= 0
KUBELET_PROFILE ?= dgx-h100
GPU_API ?= device-plugin
# KUEUE=1 adds Kueue v0.17.0 (as root) with the Configuration gpuplane
# quota needs (docs/cluster.md).
KUEUE ?= 0
cluster:
	@hack/build-controlplane.sh >&2
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(GO) build -o $(CLUSTER_DIR)/gpuplane-scheduler ./cmd/gpuplane-scheduler
	@$(GO) build -o $(CLUSTER_DIR)/gpuplane-node-agent ./cmd/gpuplane-node-agent
	@$(CLUSTER_DIR)/cluster up --dir $(CLUSTER_DIR) --nodes $(NODES) --scheduler $(CLUSTER_DIR)/gpuplane-scheduler \
		--kubelet-nodes $(KUBELET_NODES) --node-agent $(CLUSTER_DIR)/gpuplane-node-agent --kubelet-profile $(KUBELET_PROFILE) --gpu-api $(GPU_API) --kueue=$(KUEUE) $(CLUSTER_FLAGS)

cluster-down:
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(CLUSTER_DIR)/cluster down --dir $(CLUSTER_DIR)

# Restart one component of the running cluster while the others keep
# running: C=etcd|kube-apiserver|kwok|gpuplane-scheduler; KILL=1 sends
# SIGKILL (a crash) instead of SIGTERM (docs/cluster.md).
cluster-restart:
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(CLUSTER_DIR)/cluster restart --dir $(CLUSTER_DIR) $(if $(KILL),--kill) $(C)

cluster-status:
	@$(GO) build -o $(CLUSTER_DIR)/cluster ./hack/cluster
	@$(CLUSTER_DIR)/cluster status --dir $(CLUSTER_DIR)
