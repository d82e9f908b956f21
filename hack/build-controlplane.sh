#!/usr/bin/env bash
# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# Builds the control-plane programs listed in internal/testenv/kube/binaries.txt
# (etcd, kube-apiserver, kubectl, kubelet, kube-controller-manager, kwok,
# kueue, containerd, its runc shim, ctr)
# from the Go module proxy into
# ${GPUPLANE_CACHE:-$HOME/.cache/gpuplane}/bin/<name>-<version>, skipping
# those already there. The missing programs of one module are built in one
# go build (or one go install), so the packages they share (most of
# k8s.io/kubernetes, of containerd) compile once. With the binaries cached it takes a moment; cold figures are in
# docs/cluster.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${GPUPLANE_CACHE:-$HOME/.cache/gpuplane}/bin"
mkdir -p "$bin"
bin="$(cd "$bin" && pwd)"
tmp="$(mktemp -d "$bin/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Missing "tools" programs by module: module -> "name=package ...";
# missing "install" programs by "version tags": -> "name=package ...".
declare -A batch version_of install
while read -r name version how pkg tags; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  out="$bin/$name-$version"
  if [[ -x "$out" ]]; then
    echo "build-controlplane: $name $version: cached ($out)"
    continue
  fi
  case "$how" in
  tools)
    # The version comes from hack/tools/go.mod; binaries.txt must agree.
    read -r module got < <(go -C hack/tools list -f '{{.Module.Path}} {{.Module.Version}}' "$pkg")
    if [[ "$got" != "$version" ]]; then
      echo "build-controlplane: $name: hack/tools/go.mod has $got, binaries.txt says $version" >&2
      exit 1
    fi
    batch[$module]+=" $name=$pkg"
    version_of[$module]=$version
    ;;
  install)
    install["$version ${tags#tags=}"]+=" $name=$pkg"
    ;;
  *)
    echo "build-controlplane: $name: unknown way to build: $how" >&2
    exit 1
    ;;
  esac
done < internal/testenv/kube/binaries.txt

# One go install per version and tags: go install builds several packages
# only of one module at one version, and compiles what they share once.
for key in "${!install[@]}"; do
  read -r version tags <<<"$key"
  names=() pkgs=()
  for np in ${install[$key]}; do
    names+=("${np%%=*}") pkgs+=("${np#*=}@$version")
  done
  flags=()
  [[ -n "$tags" ]] && flags+=(-tags "$tags")
  if [[ "${pkgs[0]}" == github.com/containerd/containerd/v2/* ]]; then
    # Stamp the version as containerd's Makefile does.
    flags+=(-ldflags "-X github.com/containerd/containerd/v2/version.Version=$version")
  fi
  echo "build-controlplane: ${names[*]} $version: building in one go install ..."
  start=$SECONDS
  GOBIN="$tmp" go install "${flags[@]}" "${pkgs[@]}"
  for n in "${names[@]}"; do
    mv "$tmp/$n" "$bin/$n-$version"
  done
  echo "build-controlplane: ${names[*]} $version: built in $((SECONDS - start)) s"
done

for module in "${!batch[@]}"; do
  version="${version_of[$module]}"
  ldflags=()
  if [[ "$module" == k8s.io/kubernetes ]]; then
    # Stamp the version as Kubernetes' own build does
    # (hack/lib/version.sh); unstamped, the server reports v0.0.0-master.
    IFS=. read -r major minor _ <<<"${version#v}"
    flags=""
    for p in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
      flags+=" -X $p.gitVersion=$version -X $p.gitMajor=$major -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    done
    ldflags=(-ldflags "$flags")
  fi
  names=() pkgs=()
  for np in ${batch[$module]}; do
    names+=("${np%%=*}") pkgs+=("${np#*=}")
  done
  echo "build-controlplane: ${names[*]} $version: building in one go build ..."
  start=$SECONDS
  # One go build compiles every package of them all, in parallel, into
  # the build cache; with several packages it links nothing and writes
  # nothing. With one main package it would link it into the current
  # folder (etcd's as hack/tools/server), so a lone program skips this
  # step. Each program is then linked from the cache into the temporary
  # folder and moved into the cache: nothing is written anywhere else.
  if ((${#pkgs[@]} > 1)); then
    go -C hack/tools build "${ldflags[@]}" "${pkgs[@]}"
  fi
  for i in "${!pkgs[@]}"; do
    v="$(awk -v n="${names[$i]}" '$1 == n { print $2 }' internal/testenv/kube/binaries.txt)"
    go -C hack/tools build "${ldflags[@]}" -o "$tmp/${names[$i]}" "${pkgs[$i]}"
    mv "$tmp/${names[$i]}" "$bin/${names[$i]}-$v"
  done
  echo "build-controlplane: ${names[*]}: built in $((SECONDS - start)) s"
done
