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
#   dra-*         the DRA plugin in gpucheck's process: prepare and
#                 unprepare of a whole GPU (its CDI spec, made with the
#                 driver's files under $GPU_CHECK_DRIVER_ROOT, default /,
#                 by NVIDIA's nvcdi; every node and mount present), the
#                 prepare latency, two MPS shares of it, 500 milliGPU and
#                 20 GiB each (with nvidia-cuda-mps-control; with torch,
#                 a matmul client under each at 30-70 % of one alone and a
#                 24 GiB allocation refused), no spec left after unprepare
#   mig-*         one MIG device created and destroyed through the plugin,
#                 only on a GPU already in MIG mode with a free placement
#                 (SKIP otherwise: MIG mode is never changed)
#   cdi-cuinit    in a fresh mount namespace (unshare -m) with only the
#                 whole GPU's CDI spec's edits (its device nodes as /dev,
#                 its mounts, its symlink and ldcache hooks), python3
#                 loads libcuda.so.1 and cuInit(0) returns 0, every NVIDIA
#                 library mapped from the spec's mounts (needs root)
#   metrics-load-*, load-fb-*
#                 under a bf16 matmul load on every GPU for
#                 $GPU_CHECK_LOAD_SECONDS (default 25; needs torch, SKIP
#                 without it): utilization, power and temperature against
#                 nvidia-smi read during the load, and the frame buffer
#                 against nvidia-smi again (idle: metrics-idle-*)
#
# It never changes MIG mode, the compute mode or any GPU setting, resets
# nothing, and needs no kubelet or cluster; the MPS daemons it starts (one
# per GPU) run only while it runs, and the one MIG device it may create
# is destroyed before it ends. It needs bash, python3, nvidia-smi and
# the built gpucheck: from $GPU_CHECK_BIN (a directory holding gpucheck),
# else built here with go. It ends within $GPU_CHECK_TIMEOUT seconds
# (default 200) plus the load, with one summary of PASS/FAIL/SKIP lines,
# also in $OUT/results.txt (OUT default: a temporary directory).
#
#   hack/gpu-check.sh
#   GPU_CHECK_BIN=/opt/gpuplane/bin GPU_CHECK_SECONDS=10 hack/gpu-check.sh
#
# Exit status 0: all checks pass; 1: a check fails or gpucheck failed;
# 2: no NVIDIA GPU or driver (NVML does not load): every step SKIP.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-$(mktemp -d)}
seconds=${GPU_CHECK_SECONDS:-5}
limit=${GPU_CHECK_TIMEOUT:-200}
load_seconds=${GPU_CHECK_LOAD_SECONDS:-25}
driver_root=${GPU_CHECK_DRIVER_ROOT:-/}
mkdir -p "$out"
results=$out/results.txt
: >"$results"
steps=(discovery sm-count fb mps dra mig cdi-cuinit metrics-idle metrics-load)

# skip_all writes a SKIP line for every step, for a machine without a GPU.
skip_all() {
	local s
	for s in "${steps[@]}"; do
		echo "SKIP $s: $1" >>"$results"
	done
}

# summary prints the results and exits 1 on a FAIL line, else $1.
summary() {
	echo
	echo "== summary ($(hostname), $(date -u +%FT%TZ))"
	cat "$results"
	local pass fail skip
	pass=$(grep -c '^PASS' "$results" || true)
	fail=$(grep -c '^FAIL' "$results" || true)
	skip=$(grep -c '^SKIP' "$results" || true)
	echo "gpu-check: $pass PASS, $fail FAIL, $skip SKIP; results in $results, output in $out"
	[ "$fail" -eq 0 ] || exit 1
	exit "$1"
}

if ! command -v nvidia-smi >/dev/null; then
	echo "nvidia-smi not found"
	skip_all "nvidia-smi not found on $(hostname)"
	summary 2
fi

echo "== nvidia-smi (queries only)"
nvidia-smi -L || true
nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,mig.mode.current,driver_version,memory.used,memory.reserved,memory.total --format=csv || true

bin=${GPU_CHECK_BIN:-}
if [ -z "$bin" ]; then
	echo "== building gpucheck into $out (GPU_CHECK_BIN unset)"
	(cd "$here/.." && go build -o "$out/gpucheck" ./hack/gpucheck)
	bin=$out
fi

dradir=$(mktemp -d /tmp/gpucheck.XXXXXX) # short: unix socket paths
spec=$out/cdi-gpu.json
args=(--seconds "$seconds" --facts "$out/facts.json" --dra-dir "$dradir/dra" --driver-root "$driver_root" --cdi-spec-out "$spec")
if command -v nvidia-cuda-mps-control >/dev/null; then
	args+=(--mps-dir "$dradir")
	if python3 -c 'import torch' 2>/dev/null; then
		args+=(--mps-load "$here/gpucheck/mpsload.py")
	fi
fi

rc=0
timeout "$limit" "$bin/gpucheck" "${args[@]}" >"$out/gpucheck.txt" 2>"$out/gpucheck.err" || rc=$?
rm -rf "$dradir"
cat "$out/gpucheck.txt"
cat "$out/gpucheck.err" >&2
if [ "$rc" -eq 2 ]; then
	echo "gpu-check: no NVIDIA GPU/driver found on $(hostname); nothing checked" >&2
	skip_all "NVML does not load on $(hostname)"
	summary 2
fi

grep -E '^(PASS|FAIL|SKIP) ' "$out/gpucheck.txt" >>"$results" || true
if [ "$rc" -ne 0 ]; then
	echo "FAIL gpucheck: exit $rc (see $out/gpucheck.err)" >>"$results"
fi
command -v nvidia-cuda-mps-control >/dev/null || echo "SKIP mps: nvidia-cuda-mps-control not on PATH" >>"$results"

echo "== frame buffer against nvidia-smi (idle)"
if [ -s "$out/facts.json" ] && command -v nvidia-smi >/dev/null; then
	nvidia-smi --query-gpu=uuid,memory.used,memory.reserved,memory.total --format=csv,noheader,nounits >"$out/smi-memory.csv" || true
	python3 "$here/gpucheck/fbcompare.py" "$out/facts.json" "$out/smi-memory.csv" >>"$results" || true
else
	echo "SKIP fb: no facts from gpucheck or no nvidia-smi" >>"$results"
fi

echo "== cuInit with only the CDI spec's edits"
if [ ! -s "$spec" ]; then
	echo "SKIP cdi-cuinit: no whole GPU's CDI spec from gpucheck" >>"$results"
elif [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null; then
	echo "SKIP cdi-cuinit: needs root and unshare (a mount namespace)" >>"$results"
else
	timeout 120 unshare -m --propagation private python3 "$here/gpucheck/cdi_cuinit.py" "$spec" >>"$results" 2>"$out/cdi-cuinit.err" ||
		grep -q '^FAIL cdi-cuinit' "$results" || echo "FAIL cdi-cuinit: exit without a verdict (see $out/cdi-cuinit.err)" >>"$results"
fi

# compare LABEL SCRAPE: the agent's utilization, power and temperature in
# SCRAPE against nvidia-smi read now.
compare() {
	nvidia-smi --query-gpu=uuid,utilization.gpu,power.draw,temperature.gpu --format=csv,noheader,nounits >"$out/smi-$1.csv" || true
	python3 "$here/gpucheck/metricscompare.py" "$2" "$out/smi-$1.csv" "$1" >>"$results" || true
}

echo "== metrics idle and under a CUDA load"
compare idle "$out/gpucheck.txt"
if python3 -c 'import torch' 2>/dev/null; then
	python3 "$here/gpucheck/cudaload.py" "$load_seconds" >"$out/cudaload.txt" 2>&1 &
	load=$!
	sleep $((load_seconds / 3))
	lrc=0
	timeout "$limit" "$bin/gpucheck" --seconds "$seconds" --facts "$out/facts-load.json" >"$out/gpucheck-load.txt" 2>>"$out/gpucheck.err" || lrc=$?
	compare load "$out/gpucheck-load.txt"
	nvidia-smi --query-gpu=uuid,memory.used,memory.reserved,memory.total --format=csv,noheader,nounits >"$out/smi-memory-load.csv" || true
	python3 "$here/gpucheck/fbcompare.py" "$out/facts-load.json" "$out/smi-memory-load.csv" | sed 's/^\(PASS\|FAIL\|SKIP\) /\1 load-/' >>"$results" || true
	[ "$lrc" -eq 0 ] || echo "FAIL metrics-load: gpucheck exit $lrc" >>"$results"
	wait "$load" || echo "FAIL metrics-load: the CUDA load failed: $(tail -1 "$out/cudaload.txt")" >>"$results"
	cat "$out/cudaload.txt"
else
	echo "SKIP metrics-load: torch is not installed (no CUDA load)" >>"$results"
fi

summary 0
