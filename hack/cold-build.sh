#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# Benchmark of the README's first command as a new user meets it: cold,
# with an empty build cache (a fresh GOCACHE) and the modules already
# downloaded, `go run ./cmd/gpuplane simulate` compiles and runs. Prints the
# wall-clock and CPU seconds; fails if the compiler printed anything (a
# warning) or the wall clock passed COLD_BUILD_LIMIT seconds (default 60,
# the goal in the README). A benchmark, not a test: the wall-clock figure
# depends on the machine and its load.
# .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
limit="${COLD_BUILD_LIMIT:-60}"

# Modules first, outside the measurement (a no-op when they are there).
go list -deps ./cmd/gpuplane >/dev/null

cache="$(mktemp -d)"
out="$(mktemp)"
errs="$(mktemp)"
timing="$(mktemp)"
trap 'chmod -R u+w "$cache"; rm -rf "$cache" "$out" "$errs" "$timing"' EXIT

# Wall-clock seconds, and the CPU seconds (user + system, the compiler's
# work, which other load on the machine does not change).
TIMEFORMAT='%R %U %S'
status=0
{ time GOCACHE="$cache" GOPROXY=off go run ./cmd/gpuplane simulate >"$out" 2>"$errs"; } 2>"$timing" || status=$?
read -r real user sys <"$timing"
secs="$(awk -v r="$real" 'BEGIN { printf "%.1f", r }')"
cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')"

echo "cold go run ./cmd/gpuplane simulate: ${secs} s wall, ${cpu} s CPU (limit ${limit} s wall; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
fail=0
if ((status != 0)); then
  echo "cold-build: go run exited with status $status:" >&2
  cat "$errs" >&2
  exit 1
fi
# The simulator's own stderr lines start with "simulate: "; anything else
# is the go command's or the compiler's (e.g. cgo deprecation warnings).
if grep -qv '^simulate: ' "$errs"; then
  echo "cold-build: the build printed:" >&2
  grep -v '^simulate: ' "$errs" >&2
  fail=1
fi
if ! grep -Eq '^ *fgd ' "$out"; then
  echo "cold-build: no result table on stdout:" >&2
  cat "$out" >&2
  fail=1
fi
if awk -v s="$secs" -v l="$limit" 'BEGIN { exit !(s > l) }'; then
  echo "cold-build: ${secs} s is over the ${limit} s goal" >&2
  fail=1
fi
exit "$fail"
