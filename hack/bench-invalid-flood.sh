#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# BenchmarkInvalidFlood (internal/scheduler/flood_test.go) on this tree and
# on a base commit: N pods with invalid GPU requests then M valid pods on
# kwok nodes with the real gpuplane-scheduler; how long the valid pods
# wait, with and without the invalid pods. The base is exported with git
# archive into a temporary directory (no worktree) and gets this tree's
# flood_test.go, which uses only helpers the base's tests have.
#
#   hack/bench-invalid-flood.sh [BASE] [NxM]
#
# BASE defaults to where HEAD left the merge branch (git merge-base HEAD
# merge), NxM to 2000x100.
#
# Needs the control plane of hack/build-controlplane.sh. Prints the
# benchmark lines of each tree; figures, not assertions: everything
# shares the machine.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
base=${1:-$(git -C "$root" merge-base HEAD merge)}
flood=${2:-2000x100}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # dir label
	echo "== $2"
	(cd "$1" && GPUPLANE_FLOOD=$flood go test -run '^$' -bench InvalidFlood -benchtime 1x -timeout 60m ./internal/scheduler/ 2>&1 |
		grep -E '^(Benchmark|ok|FAIL|---)' || true)
}

git -C "$root" archive "$base" | tar -x -C "$tmp"
cp "$root/internal/scheduler/flood_test.go" "$tmp/internal/scheduler/"
run "$tmp" "base $(git -C "$root" rev-parse --short "$base")"
run "$root" "this tree $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+changes')"
