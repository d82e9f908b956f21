#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# gpu-check.sh: a read-only look at a machine with NVIDIA GPUs through the
# node agent's nvml backend. It builds gpuplane-node-agent and
# hack/gpucheck, then prints what the agent sees: nvidia-smi's list (a
# query), the discovered GPUs, the feature labels, health events for a few
# seconds, one metrics scrape, and the ResourceSlices the DRA plugin would
# publish. It never changes MIG mode or any GPU setting, resets nothing,
# and needs no kubelet or cluster.
#
#   hack/gpu-check.sh            # output also in $OUT (default: a temp dir)
#   GPU_CHECK_SECONDS=10 hack/gpu-check.sh
#
# Exit status 2 without an NVIDIA GPU or driver (NVML does not load).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
seconds=${GPU_CHECK_SECONDS:-5}
mkdir -p "$out"

echo "== nvidia-smi (queries only)"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi -L || true
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,mig.mode.current,driver_version --format=csv || true
else
	echo "nvidia-smi not found"
fi

echo "== building gpuplane-node-agent and gpucheck into $out"
go build -o "$out/gpuplane-node-agent" ./cmd/gpuplane-node-agent
go build -o "$out/gpucheck" ./hack/gpucheck
"$out/gpuplane-node-agent" --version

rc=0
"$out/gpucheck" --seconds "$seconds" >"$out/gpucheck.txt" 2>"$out/gpucheck.err" || rc=$?
cat "$out/gpucheck.txt"
cat "$out/gpucheck.err" >&2
if [ "$rc" -eq 2 ]; then
	echo "gpu-check: no NVIDIA GPU/driver found on $(hostname); nothing checked" >&2
	exit 2
fi
if [ "$rc" -ne 0 ]; then
	echo "gpu-check: gpucheck failed (exit $rc); output in $out" >&2
	exit "$rc"
fi
echo "gpu-check: done; output in $out/gpucheck.txt"
