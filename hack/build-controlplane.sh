#!/usr/bin/env bash
# Builds the control-plane programs listed in internal/testenv/kube/binaries.txt
# (etcd, kube-apiserver, kubectl, kwok) from the Go module proxy into
# ${GPUPLANE_CACHE:-$HOME/.cache/gpuplane}/bin/<name>-<version>, skipping
# those already there. Cold it takes 27 CPU-minutes, most of them for
# kube-apiserver (about 14 minutes on 2 idle cores); with the binaries
# cached it takes a moment (docs/cluster.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${GPUPLANE_CACHE:-$HOME/.cache/gpuplane}/bin"
mkdir -p "$bin"
bin="$(cd "$bin" && pwd)"
tmp="$(mktemp -d "$bin/.build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

while read -r name version how pkg; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  out="$bin/$name-$version"
  if [[ -x "$out" ]]; then
    echo "build-controlplane: $name $version: cached ($out)"
    continue
  fi
  echo "build-controlplane: $name $version: building $pkg ..."
  start=$SECONDS
  case "$how" in
  tools)
    # The version comes from hack/tools/go.mod; binaries.txt must agree.
    read -r module got < <(go -C hack/tools list -f '{{.Module.Path}} {{.Module.Version}}' "$pkg")
    if [[ "$got" != "$version" ]]; then
      echo "build-controlplane: $name: hack/tools/go.mod has $got, binaries.txt says $version" >&2
      exit 1
    fi
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
    go -C hack/tools build "${ldflags[@]}" -o "$tmp/$name" "$pkg"
    ;;
  install)
    GOBIN="$tmp" go install "$pkg@$version"
    ;;
  *)
    echo "build-controlplane: $name: unknown way to build: $how" >&2
    exit 1
    ;;
  esac
  mv "$tmp/$name" "$out"
  echo "build-controlplane: $name $version: built in $((SECONDS - start)) s"
done < internal/testenv/kube/binaries.txt
