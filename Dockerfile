# Copyright 2026 The gpuplane Authors
# SPDX-License-Identifier: Apache-2.0
# The image of gpuplane's in-cluster roles: gpuplane-node-agent (the GPU
# node DaemonSet), gpuplane-scheduler, gpuplane-webhook and gpuplane-cost
# (cost rates with --serve), on PATH as
# /usr/bin/<name>. The Helm chart (deploy/helm/gpuplane) runs it with
# command: [<binary>].
#
#   docker build -t ghcr.io/gpuplane/gpuplane:0.1.0 .
#   buildah bud --storage-driver vfs -t ghcr.io/gpuplane/gpuplane:0.1.0 .
#
# Build stage: the Go toolchain of go.mod, with gcc for cgo (go-nvml loads
# the driver's libnvidia-ml.so.1 with dlopen at run time).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=devel
ARG COMMIT=unknown
# go-nvml's header marks some NVML calls deprecated; gcc would say so for each.
RUN CGO_ENABLED=1 CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations" go build -trimpath \
      -ldflags "-X github.com/gpuplane/gpuplane/internal/version.version=${VERSION} -X github.com/gpuplane/gpuplane/internal/version.commit=${COMMIT}" \
      -o /out/ ./cmd/gpuplane-node-agent ./cmd/gpuplane-scheduler ./cmd/gpuplane-webhook ./cmd/gpuplane-cost

# Run stage: glibc (for cgo and dlopen) and CA certificates, no shell. Runs
# as root, as NVIDIA's device plugin does: the agent creates sockets in the
# kubelet's root-owned device-plugin directory. The NVIDIA container runtime
# mounts the driver's libraries into it (NVIDIA_DRIVER_CAPABILITIES=utility,
# set by the chart).
FROM gcr.io/distroless/base-debian12
COPY --from=build /out/gpuplane-node-agent /out/gpuplane-scheduler /out/gpuplane-webhook /out/gpuplane-cost /usr/bin/
USER 0:0
ENTRYPOINT ["/usr/bin/gpuplane-node-agent"]
