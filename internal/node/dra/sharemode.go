// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"fmt"
	"strconv"
	"strings"
)

// ShareMode is how a shared GPU (Options.Shares) is published, after the
// modes of NVIDIA's driver's --consumable-shares (sigs.k8s.io/
// dra-driver-nvidia-gpu, commit 95932046,
// cmd/gpu-kubelet-plugin/consumable_shares.go, main.go). The zero value
// is its "memory" mode. Every mode keeps gpuplane's milliGPU capacity
// (1..1000, default 1) beside NVIDIA's, so a claim holds at least 1
// milli-GPU.
type ShareMode struct {
	// Unlimited is NVIDIA's "unlimited": memory defaults to 0 (range
	// 0..all, 1Mi steps), so a claim that asks nothing holds milliGPU's
	// default, 1 milli-GPU, the smallest share. Unlike NVIDIA's, where
	// such claims consume nothing, at most 1000 share a GPU.
	Unlimited bool
	// Shares > 0 is NVIDIA's integer mode: a "shares" capacity of
	// Shares (default 1, 1..Shares, step 1) and memory as Unlimited; a
	// claim of s shares holds s/Shares of the GPU.
	Shares int64
}

// ParseShareMode reads a --consumable-shares value as NVIDIA's driver
// takes it: "memory", "unlimited" or a positive integer. Errors name the
// value.
func ParseShareMode(s string) (ShareMode, error) {
	switch s = strings.TrimSpace(s); s {
	case "memory":
		return ShareMode{}, nil
	case "unlimited":
		return ShareMode{Unlimited: true}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > maxShares {
		return ShareMode{}, fmt.Errorf("consumable shares %q: not memory, unlimited or an integer 1..%d", s, maxShares)
	}
	return ShareMode{Shares: n}, nil
}

// maxShares bounds the integer mode: 1000 shares are 1 milli-GPU each,
// the smallest share gpuplane counts.
const maxShares = 1000

// String is the mode as ParseShareMode reads it.
func (m ShareMode) String() string {
	switch {
	case m.Shares > 0:
		return strconv.FormatInt(m.Shares, 10)
	case m.Unlimited:
		return "unlimited"
	}
	return "memory"
}
