#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
#
# gpu-check.sh: a read-only look at a machine with NVIDIA GPUs through the
# node agent's nvml backend (hack/gpucheck), with PASS/FAIL checks against
# nvidia-smi: what the agent sees (nvidia-smi's list, the discovered GPUs,
# the feature labels, health events for a few seconds, one metrics
# scrape, the ResourceSlices the DRA plugin would publish), and
#
#   sm-count      every GPU's SM count is known (NVML, else NVIDIA's
#                 published count for the product; never 0 for a known one)
#   fb-used       DCGM_FI_DEV_FB_USED = nvidia-smi's memory.used (the
#                 driver's reserved memory excluded, as DCGM)
#   fb-reserved   DCGM_FI_DEV_FB_RESERVED = nvidia-smi's memory.reserved
#   fb-total      used + free + reserved = nvidia-smi's memory.total
#   mps-*         NVIDIA's sharing.mps through the device plugin and a test
#                 kubelet: replicas, Allocate's environment and mounts, the
#                 MPS daemon's per-replica defaults (needs
#                 nvidia-cuda-mps-control; SKIP without it)
#
# It never changes MIG mode, the compute mode or any GPU setting, resets
# nothing, and needs no kubelet or cluster; the MPS daemons it starts (one
# per GPU) run only while it runs. It needs bash, python3, nvidia-smi and
# the built gpucheck: from $GPU_CHECK_BIN (a directory holding gpucheck),
# else built here with go. It ends within $GPU_CHECK_TIMEOUT seconds
# (default 200), with one summary of PASS/FAIL/SKIP lines, also in
# $OUT/results.txt (OUT default: a temporary directory).
#
#   hack/gpu-check.sh
#   GPU_CHECK_BIN=/opt/gpuplane/bin GPU_CHECK_SECONDS=10 hack/gpu-check.sh
#
# Exit status 0: all checks pass; 1: a check fails or gpucheck failed;
# 2: no NVIDIA GPU or driver (NVML does not load).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
seconds=${GPU_CHECK_SECONDS:-5}
limit=${GPU_CHECK_TIMEOUT:-200}
mkdir -p "$out"

echo "== nvidia-smi (queries only)"
if command -v nvidia-smi >/dev/null; then
	nvidia-smi -L || true
	nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,mig.mode.current,driver_version,memory.used,memory.reserved,memory.total --format=csv || true
else
	echo "nvidia-smi not found"
fi

bin=${GPU_CHECK_BIN:-}
if [ -z "$bin" ]; then
	echo "== building gpucheck into $out (GPU_CHECK_BIN unset)"
	(cd "$here/.." && go build -o "$out/gpucheck" ./hack/gpucheck)
	bin=$out
fi

args=(--seconds "$seconds" --facts "$out/facts.json")
mpsdir=""
if command -v nvidia-cuda-mps-control >/dev/null; then
	mpsdir=$(mktemp -d /tmp/gpucheck.XXXXXX) # short: unix socket paths
	args+=(--mps-dir "$mpsdir")
fi

rc=0
timeout "$limit" "$bin/gpucheck" "${args[@]}" >"$out/gpucheck.txt" 2>"$out/gpucheck.err" || rc=$?
[ -n "$mpsdir" ] && rm -rf "$mpsdir"
cat "$out/gpucheck.txt"
cat "$out/gpucheck.err" >&2
if [ "$rc" -eq 2 ]; then
	echo "gpu-check: no NVIDIA GPU/driver found on $(hostname); nothing checked" >&2
	exit 2
fi

results=$out/results.txt
grep -E '^(PASS|FAIL|SKIP) ' "$out/gpucheck.txt" >"$results" || true
if [ "$rc" -ne 0 ]; then
	echo "FAIL gpucheck: exit $rc (see $out/gpucheck.err)" >>"$results"
fi
[ -z "$mpsdir" ] && echo "SKIP mps: nvidia-cuda-mps-control not on PATH" >>"$results"

echo "== frame buffer against nvidia-smi"
if [ -s "$out/facts.json" ] && command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=uuid,memory.used,memory.reserved,memory.total --format=csv,noheader,nounits >"$out/smi-memory.csv" || true
	python3 "$here/gpucheck/fbcompare.py" "$out/facts.json" "$out/smi-memory.csv" >>"$results" || true
else
	echo "SKIP fb: no facts from gpucheck or no nvidia-smi" >>"$results"
fi

echo
echo "== summary ($(hostname), $(date -u +%FT%TZ))"
cat "$results"
pass=$(grep -c '^PASS' "$results" || true)
fail=$(grep -c '^FAIL' "$results" || true)
skip=$(grep -c '^SKIP' "$results" || true)
echo "gpu-check: $pass PASS, $fail FAIL, $skip SKIP; results in $results, output in $out"
[ "$fail" -eq 0 ]
