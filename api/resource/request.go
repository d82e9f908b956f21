// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package resource

import "fmt"

// MilliPerGPU is one whole GPU in milli-GPU, the unit of GPUMilli.
const MilliPerGPU = 1000

// MaxGPUs is the most whole GPUs (GPU) a pod may ask for: the most GPUs a
// node has (internal/cluster's GPU sets are 64-bit masks).
const MaxGPUs = 64

// Container is the part of one container that a pod's requests read: a
// minimal view that each reader fills from its own types (a core/v1
// Container, a snapshot's JSON, the admission policy's Container).
type Container struct {
	// Init marks an init container. Sidecar marks an init container with
	// restartPolicy Always (a native sidecar, KEP 753), which runs
	// alongside the containers; Sidecar implies Init.
	Init, Sidecar bool
	// Requests maps a resource name to the container's request in the
	// unit its reader counts it in: milli-GPU for GPUMilli, devices for GPU
	// and the MIG resources (millicores for cpu, bytes for memory where a
	// reader counts those). A resource listed with 0 is asked for with 0.
	Requests map[string]int64
}

// Pod is the part of a pod that its requests read.
type Pod struct {
	// Containers are the init containers, in their order, and the
	// containers (in any order after or among them: only the init
	// containers' order matters).
	Containers []Container
	// Overhead is spec.overhead (the RuntimeClass's), added to the sum.
	Overhead map[string]int64
}

// PodRequests returns the pod's effective request of each resource its
// containers or its overhead list, as k8s.io/component-helpers' resource
// PodRequests computes it for kube-scheduler and the kubelet: the sum over
// the containers; each init container in order raises a maximum to its own
// request plus the sidecars started before it, and a sidecar adds to the
// sum too; the effective request is the larger of the sum and that
// maximum, plus the overhead. Units are the Requests' units.
func PodRequests(p Pod) map[string]int64 {
	sum := map[string]int64{}
	initMax, sidecars := map[string]int64{}, map[string]int64{}
	for _, c := range p.Containers {
		switch {
		case c.Sidecar:
			for k, v := range c.Requests {
				sum[k] += v
				sidecars[k] += v
			}
			for k, v := range sidecars {
				initMax[k] = max(initMax[k], v)
			}
		case c.Init:
			for k, v := range c.Requests {
				initMax[k] = max(initMax[k], v+sidecars[k])
			}
			for k, v := range sidecars {
				if _, ok := c.Requests[k]; !ok {
					initMax[k] = max(initMax[k], v)
				}
			}
		default:
			for k, v := range c.Requests {
				sum[k] += v
			}
		}
	}
	for k, v := range initMax {
		sum[k] = max(sum[k], v)
	}
	for k, v := range p.Overhead {
		sum[k] += v
	}
	return sum
}

// GPURequest is a pod's GPU request: GPUs GPUs of Milli milli-GPU each.
type GPURequest struct {
	// GPUs is the GPU count: the whole GPUs (GPU), 1 for a share of one
	// GPU (GPUMilli), 0 for a pod without GPUs.
	GPUs int64
	// Milli is the milli-GPU held on each GPU: MilliPerGPU for whole GPUs,
	// 1..MilliPerGPU for a share, 0 for a pod without GPUs.
	Milli int64
}

// PodGPURequest returns the GPU request of pod p: the rule of
// GPURequestOf over its effective requests (PodRequests).
func PodGPURequest(p Pod) (GPURequest, error) { return GPURequestOf(PodRequests(p)) }

// GPURequestOf returns the GPU request of a pod's effective requests req
// (GPU in devices, GPUMilli in milli-GPU): whole GPUs (1..MaxGPUs) or a
// share of one GPU (1..MilliPerGPU milli-GPU), never both. A pod that lists
// GPUMilli asks for a share whatever its value, so that a share of 0 is
// refused rather than read as no GPU; a GPU request of 0 or less is no
// GPU. The error is a *RequestError.
func GPURequestOf(req map[string]int64) (GPURequest, error) {
	whole, milli := req[GPU], req[GPUMilli]
	_, asksMilli := req[GPUMilli]
	switch {
	case asksMilli && whole > 0:
		return GPURequest{}, &RequestError{Reason: ReasonBoth, GPUs: whole, Milli: milli}
	case asksMilli && (milli < 1 || milli > MilliPerGPU):
		return GPURequest{}, &RequestError{Reason: ReasonMilliRange, GPUs: whole, Milli: milli}
	case asksMilli:
		return GPURequest{GPUs: 1, Milli: milli}, nil
	case whole > MaxGPUs:
		return GPURequest{}, &RequestError{Reason: ReasonTooManyGPUs, GPUs: whole, Milli: milli}
	case whole > 0:
		return GPURequest{GPUs: whole, Milli: MilliPerGPU}, nil
	}
	return GPURequest{}, nil
}

// Reason is why GPURequestOf refuses a request.
type Reason int

// The reasons of a RequestError.
const (
	// ReasonBoth: whole GPUs (GPU above 0) and a share (GPUMilli) at once.
	ReasonBoth Reason = iota + 1
	// ReasonMilliRange: GPUMilli outside 1..MilliPerGPU milli-GPU.
	ReasonMilliRange
	// ReasonTooManyGPUs: GPU above MaxGPUs.
	ReasonTooManyGPUs
)

// RequestError is a GPU request that GPURequestOf refuses, with the
// effective requests it read, for a caller to word the error in its own
// terms.
type RequestError struct {
	Reason Reason
	// GPUs is the effective GPU request (devices), Milli the effective
	// GPUMilli request (milli-GPU).
	GPUs, Milli int64
}

func (e *RequestError) Error() string {
	switch e.Reason {
	case ReasonBoth:
		return fmt.Sprintf("both %s and %s: ask for whole GPUs or a share, not both", GPU, GPUMilli)
	case ReasonMilliRange:
		return fmt.Sprintf("%s %d out of range 1..%d", GPUMilli, e.Milli, MilliPerGPU)
	case ReasonTooManyGPUs:
		return fmt.Sprintf("%s %d above %d", GPU, e.GPUs, MaxGPUs)
	}
	return fmt.Sprintf("GPU request refused (reason %d)", e.Reason)
}
