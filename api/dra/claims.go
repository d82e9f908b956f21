// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"fmt"
	"strconv"
	"strings"
)

// ClaimSpec is the part of a ResourceClaim's spec (a
// ResourceClaimTemplate's spec.spec) that says which devices it asks for,
// as resource.k8s.io v1 writes it (a request's devices under exactly or
// firstAvailable) and v1beta1 (a request's devices in the request
// itself). Field names are Kubernetes'; other fields are not read.
type ClaimSpec struct {
	Devices struct {
		Requests []DeviceRequest `json:"requests" yaml:"requests"`
	} `json:"devices" yaml:"devices"`
}

// DeviceRequest is one request of a claim.
type DeviceRequest struct {
	Name string `json:"name" yaml:"name"`
	// Exactly is v1's request of one kind of device.
	Exactly *ExactRequest `json:"exactly" yaml:"exactly"`
	// FirstAvailable are v1's alternatives, the first that can be
	// allocated wins.
	FirstAvailable []ExactRequest `json:"firstAvailable" yaml:"firstAvailable"`
	// ExactRequest is v1beta1's request, its fields in the request.
	ExactRequest `yaml:",inline"`
}

// ExactRequest is a request of devices of one class.
type ExactRequest struct {
	DeviceClassName string     `json:"deviceClassName" yaml:"deviceClassName"`
	Selectors       []Selector `json:"selectors" yaml:"selectors"`
	// AllocationMode is ExactCount (default) or All.
	AllocationMode string `json:"allocationMode" yaml:"allocationMode"`
	// Count is ExactCount's number of devices, default 1.
	Count       *int64 `json:"count" yaml:"count"`
	AdminAccess *bool  `json:"adminAccess" yaml:"adminAccess"`
	Capacity    *struct {
		Requests map[string]string `json:"requests" yaml:"requests"`
	} `json:"capacity" yaml:"capacity"`
}

// Selector is a request's selector: a CEL expression.
type Selector struct {
	CEL *struct {
		Expression string `json:"expression" yaml:"expression"`
	} `json:"cel" yaml:"cel"`
}

// Ask is what one request of a claim asks of the driver, as admission
// counts it (Asks).
type Ask struct {
	// Request is the request's name.
	Request string
	// Class is the request's DeviceClass.
	Class string
	// Type is TypeGPU for class GPUDeviceClass, TypeMIG for
	// MIGDeviceClass, "" for any other class (not the driver's GPUs as
	// far as admission knows: not counted).
	Type string
	// Count is the devices asked for: ExactCount's count (default 1);
	// allocationMode All is counted as 1 (AllCount), and a Note says so.
	Count int64
	// Profile is the MIG profile the selectors ask for ("" any).
	Profile string
	// Products are the productName values the selectors ask for (nil:
	// any).
	Products []string
	// MilliGPU is a share of a GPU (capacity.requests.milliGPU, 1..999),
	// 0 for whole devices.
	MilliGPU int64
	// Shares is NVIDIA's integer share (capacity.requests.shares, its
	// driver's --consumable-shares=N), 0 when not asked. Its part of the
	// GPU, Shares/N, depends on the N of the node it lands on, which
	// admission cannot know: the device is counted whole, and a Note says
	// so. (A claim of NVIDIA's unlimited or integer modes that asks
	// nothing, as its demo templates do, is counted as the whole device it
	// names, as any share is.)
	Shares int64
	// AdminAccess: the request asks for admin access, which upstream's
	// allocator lets share any device and consume nothing.
	AdminAccess bool
	// Notes say what admission could not know and what it assumed.
	Notes []string
}

// AllCount is how many devices a request with allocationMode All is
// counted as: all the matching devices of one node, which admission
// cannot know.
const AllCount = 1

// GPUs is what the ask counts towards a pod's GPUs: its count, for the
// driver's GPUs and MIG devices without admin access; a share counts
// each device whole, as gpuplane.io/gpu-milli is rounded up.
func (a Ask) GPUs() int64 {
	if a.Type == "" || a.AdminAccess {
		return 0
	}
	return a.Count
}

// Asks returns what each request of a claim asks for, in order; a
// request with firstAvailable is read as its first alternative (the one
// the scheduler tries first; a Note says so).
func Asks(spec ClaimSpec) []Ask {
	out := make([]Ask, 0, len(spec.Devices.Requests))
	for _, r := range spec.Devices.Requests {
		e, a := r.ExactRequest, Ask{Request: r.Name}
		switch {
		case r.Exactly != nil:
			e = *r.Exactly
		case len(r.FirstAvailable) > 0:
			e = r.FirstAvailable[0]
			a.Notes = append(a.Notes, fmt.Sprintf("request %s: firstAvailable read as its first alternative", r.Name))
		}
		a.read(e)
		out = append(out, a)
	}
	return out
}

// read fills a from request e.
func (a *Ask) read(e ExactRequest) {
	a.Class, a.Count = e.DeviceClassName, 1
	switch e.DeviceClassName {
	case GPUDeviceClass:
		a.Type = TypeGPU
	case MIGDeviceClass:
		a.Type = TypeMIG
	default:
		a.Notes = append(a.Notes, fmt.Sprintf("request %s: device class %q is not %s or %s: not counted as GPUs", a.Request, e.DeviceClassName, GPUDeviceClass, MIGDeviceClass))
	}
	if e.Count != nil {
		a.Count = *e.Count
	}
	if e.AllocationMode == "All" {
		a.Count = AllCount
		a.Notes = append(a.Notes, fmt.Sprintf("request %s: allocationMode All counted as %d device", a.Request, AllCount))
	}
	a.AdminAccess = e.AdminAccess != nil && *e.AdminAccess
	if e.Capacity != nil {
		if v, ok := e.Capacity.Requests[CapacityMilliGPU]; ok {
			m, err := strconv.ParseInt(v, 10, 64)
			if err != nil || m < 1 || m > 1000 {
				a.Notes = append(a.Notes, fmt.Sprintf("request %s: capacity.requests.milliGPU %q is not 1..1000: counted as whole GPUs", a.Request, v))
			} else if m < 1000 {
				a.MilliGPU = m
			}
		}
		if v, ok := e.Capacity.Requests[CapacityShares]; ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				a.Notes = append(a.Notes, fmt.Sprintf("request %s: capacity.requests.shares %q is not a positive integer: counted as whole GPUs", a.Request, v))
			} else {
				a.Shares = n
				a.Notes = append(a.Notes, fmt.Sprintf("request %s: capacity.requests.shares %d: its part of a GPU depends on the node's count of shares: counted as whole GPUs", a.Request, n))
			}
		}
	}
	for _, s := range e.Selectors {
		if s.CEL == nil {
			continue
		}
		for _, clause := range strings.Split(s.CEL.Expression, "&&") {
			attr, v, ok := ParseSelectorClause(clause)
			switch {
			case ok && attr == AttrProductName:
				a.Products = append(a.Products, v)
			case ok && attr == AttrProfile:
				a.Profile = v
			case ok && attr == AttrType:
			default:
				a.Notes = append(a.Notes, fmt.Sprintf("request %s: selector %q not read (only %s attributes productName, profile and type compared with ==, joined by &&)", a.Request, strings.TrimSpace(clause), DriverName))
			}
		}
	}
}
