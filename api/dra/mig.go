// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"fmt"
	"strconv"
	"strings"
)

// MIGProfile is what a MIG profile's name says, by NVIDIA's rule
// (go-nvlib pkg/nvlib/device/mig_profile.go, MigProfileInfo.String):
// "[<c>c.]<g>g.<gb>gb[+<attributes>|-<attributes>]", e.g. "3g.40gb",
// "1g.10gb+me", "1c.7g.80gb".
type MIGProfile struct {
	// ComputeSlices is the GPU instance's compute slices (the "<g>g").
	ComputeSlices int
	// ComputeInstanceSlices is the compute instance's slices (the
	// "<c>c."), 0 when the compute instance spans the GPU instance (the
	// name has no "<c>c.").
	ComputeInstanceSlices int
	// MemoryGB is the memory of the name (the "<gb>gb").
	MemoryGB int
	// MediaExtensions is the media-extension GPU instance ("+me").
	MediaExtensions bool
	// Attributes is any other attribute suffix, verbatim ("+gfx",
	// "-me"); "" for the MIG table's profiles.
	Attributes string
}

// ParseMIGProfile reads a MIG profile's name: "3g.40gb", "1g.10gb+me",
// "1c.7g.80gb"; the media-extension profile is read in its resource-name
// spelling too ("1g.10gb.me", nvidia.com/mig-1g.10gb.me, as NVIDIA's
// device plugin advertises it). The GPU instance has 1..8 compute slices,
// the compute instance 1..those.
func ParseMIGProfile(s string) (MIGProfile, error) {
	var p MIGProfile
	base := s
	if i := strings.IndexAny(s, "+-"); i >= 0 {
		base = s[:i]
		switch suffix := s[i:]; {
		case suffix == "+me":
			p.MediaExtensions = true
		case len(suffix) > 1:
			p.Attributes = suffix
		default:
			return MIGProfile{}, fmt.Errorf("MIG profile %q: want [<c>c.]<g>g.<gb>gb[+me]", s)
		}
	} else if b, ok := strings.CutSuffix(s, ".me"); ok {
		base, p.MediaExtensions = b, true
	}
	parts := strings.Split(base, ".")
	ok := len(parts) == 2 || len(parts) == 3
	if len(parts) == 3 {
		p.ComputeInstanceSlices, ok = number(parts[0], "c")
	}
	if ok {
		n := len(parts)
		var okG, okGB bool
		p.ComputeSlices, okG = number(parts[n-2], "g")
		p.MemoryGB, okGB = number(parts[n-1], "gb")
		ok = okG && okGB && p.ComputeSlices <= 8 && p.ComputeInstanceSlices <= p.ComputeSlices
	}
	if !ok {
		return MIGProfile{}, fmt.Errorf("MIG profile %q: want [<c>c.]<g>g.<gb>gb[+me], <g> 1..8", s)
	}
	return p, nil
}

// number reads "<n><unit>" with n a positive decimal without leading
// zeros.
func number(s, unit string) (int, bool) {
	d, ok := strings.CutSuffix(s, unit)
	if !ok || d == "" || d[0] == '0' || strings.TrimLeft(d, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(d)
	return n, err == nil
}

// SpellMIGProfile names a MIG profile as NVIDIA's rule does, the "profile"
// attribute's spelling: "3g.40gb", "1g.10gb+me", "1c.7g.80gb".
func SpellMIGProfile(p MIGProfile) string {
	var b strings.Builder
	if p.ComputeInstanceSlices > 0 {
		fmt.Fprintf(&b, "%dc.", p.ComputeInstanceSlices)
	}
	fmt.Fprintf(&b, "%dg.%dgb", p.ComputeSlices, p.MemoryGB)
	if p.MediaExtensions {
		b.WriteString("+me")
	}
	b.WriteString(p.Attributes)
	return b.String()
}

// String is SpellMIGProfile(p).
func (p MIGProfile) String() string { return SpellMIGProfile(p) }

// MIGSlices returns the compute slices of a MIG profile's name ("3g.40gb":
// 3), 0 when it names none.
func MIGSlices(profile string) int {
	p, err := ParseMIGProfile(profile)
	if err != nil {
		return 0
	}
	return p.ComputeSlices
}
