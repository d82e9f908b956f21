#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# Benchmark of the README's first command as a new user meets it: cold,
# with an empty build cache (a fresh GOCACHE) and the modules already
# downloaded, `go run ./cmd/gpuplane simulate` compiles and runs. Reports
# the wall-clock seconds, the CPU seconds (user + system: the compiler's
# work, which other load on the machine barely changes), the number of
# CPUs and the load average before and after. Time never fails it: the
# wall clock depends on the machine and its load (docs/development.md has
# measured figures). It fails only when the command fails, prints no
# result table, or the build prints anything (a compiler warning).
# .ci/run calls it; so does make cold-build.
set -euo pipefail
cd "$(dirname "$0")/.."

# Modules first, outside the measurement (a no-op when they are there).
go list -deps ./cmd/gpuplane >/dev/null

cache="$(mktemp -d)"
out="$(mktemp)"
errs="$(mktemp)"
timing="$(mktemp)"
trap 'chmod -R u+w "$cache"; rm -rf "$cache" "$out" "$errs" "$timing"' EXIT

load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
TIMEFORMAT='%R %U %S'
status=0
{ time GOCACHE="$cache" GOPROXY=off go run ./cmd/gpuplane simulate >"$out" 2>"$errs"; } 2>"$timing" || status=$?
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
read -r real user sys <"$timing"
wall="$(awk -v r="$real" 'BEGIN { printf "%.1f", r }')"
cpu="$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", u + s }')"

echo "cold-build: go run ./cmd/gpuplane simulate, empty GOCACHE: ${wall} s wall, ${cpu} s CPU (user ${user}, system ${sys}); $(nproc) CPUs; load average ${load_before} before, ${load_after} after; $(go env GOVERSION)"
if ((status != 0)); then
  echo "cold-build: go run exited with status $status:" >&2
  cat "$errs" >&2
  exit 1
fi
fail=0
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
exit "$fail"
