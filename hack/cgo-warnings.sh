#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# Check that `make build` and `make test` print no compiler warning: every
# package with cgo files among the dependencies of ./... and its tests
# (go-nvml's nvml and dl, and the standard library's net, os/user and
# runtime/cgo) compiled cold, with an empty build cache (a cached package
# prints nothing, so a warm `make build` would pass whatever the flags),
# and the Makefile's CGO_CFLAGS (run it as `make cgo-warnings`). Fails on
# any output of the compilers. Before the Makefile set
# -Wno-deprecated-declarations, go-nvml printed 147 lines here, 29 of them
# warnings: `'nvmlDeviceGetApplicationsClock' is deprecated
# [-Wdeprecated-declarations]`. About 30 s of CPU.
# .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CGO_CFLAGS:?not set: run make cgo-warnings, which sets CGO_CFLAGS}"

# Modules first (a no-op when they are there).
mapfile -t pkgs < <(go list -deps -test -f '{{if .CgoFiles}}{{.ImportPath}}{{end}}' ./... | sort -u)
if ((${#pkgs[@]} == 0)); then
  echo "cgo-warnings: no cgo package in the build" >&2
  exit 1
fi

cache="$(mktemp -d)"
out="$(mktemp)"
trap 'chmod -R u+w "$cache"; rm -rf "$cache" "$out"' EXIT

status=0
GOCACHE="$cache" GOPROXY=off go build "${pkgs[@]}" >"$out" 2>&1 || status=$?
if ((status != 0)); then
  echo "cgo-warnings: go build exited with status $status:" >&2
  cat "$out" >&2
  exit 1
fi
if [[ -s "$out" ]]; then
  echo "cgo-warnings: compiling ${pkgs[*]} with CGO_CFLAGS='$CGO_CFLAGS' printed $(grep -c warning "$out" || true) warnings:" >&2
  cat "$out" >&2
  exit 1
fi
echo "cgo-warnings: ${#pkgs[@]} cgo packages (${pkgs[*]}) compiled cold with CGO_CFLAGS='$CGO_CFLAGS': no compiler output"
