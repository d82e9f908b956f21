// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// TestPrintSlices: the built-in dgx-h100 profile, 8 H100s without MIG,
// prints one ResourceSlice of the 8 whole GPUs gpu-0 .. gpu-7 for node
// host, then "8 devices in 1 slices".
func TestPrintSlices(t *testing.T) {
	b, err := mock.Open("dgx-h100", mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printSlices(&out, n, "host", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	text, last, _ := strings.Cut(strings.TrimSuffix(out.String(), "\n"), "\n}\n")
	if last != "8 devices in 1 slices" {
		t.Fatalf("last line %q", last)
	}
	var s resourceapi.ResourceSlice
	if err := json.Unmarshal([]byte(text+"\n}"), &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range s.Spec.Devices {
		names = append(names, d.Name)
	}
	if s.Spec.Driver != "gpu.nvidia.com" || *s.Spec.NodeName != "host" || s.Spec.Pool.Name != "host" ||
		strings.Join(names, ",") != "gpu-0,gpu-1,gpu-2,gpu-3,gpu-4,gpu-5,gpu-6,gpu-7" {
		t.Errorf("slice: driver %s, node %s, pool %s, devices %v", s.Spec.Driver, *s.Spec.NodeName, s.Spec.Pool.Name, names)
	}
}

// TestPrintSlicesLiveMIG: on the dgx-a100-80gb-mig profile the 6 MIG-enabled
// A100s have full layouts made outside DRA, published as they are, with
// no placement left free, as the plugin does (internal/node/agent
// TestRunDRA): 4 × 7 1g.10gb + 2 × (3g.40gb, 2g.20gb, 2 × 1g.10gb) = 36
// MIG devices and the 2 GPUs without MIG, 38 devices in one slice (none
// consumes counters: up to 128), the 6 counter sets in another.
func TestPrintSlicesLiveMIG(t *testing.T) {
	b, err := mock.Open("dgx-a100-80gb-mig", mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	n, err := b.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := liveMIG(ctx, b, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(busy) != 6 {
		t.Errorf("busy GPUs %d, want 6", len(busy))
	}
	var out bytes.Buffer
	if err := printSlices(&out, n, "host", false, busy, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\n38 devices in 2 slices\n") {
		t.Errorf("output ends %q", out.String()[max(0, out.Len()-60):])
	}
}

// offering is the mock backend with MIG-enabled GPUs that list every
// placement of the A100-80GB table but 3g.40gb at slot 4.
type offering struct{ *mock.Backend }

func (offering) MIGOffer(context.Context, string) (device.MIGOffer, error) {
	off := device.MIGOffer{}
	for _, p := range gpu.MIGProfiles("A100-80GB") {
		off[p.GIProfileID] = p.Starts
	}
	off[nvml.GPU_INSTANCE_PROFILE_3_SLICE] = []int{0}
	return off, nil
}

// migOffers prints, for each of the 6 MIG-enabled A100s of
// dgx-a100-80gb-mig, the one difference from the table.
func TestMIGOffers(t *testing.T) {
	b, err := mock.Open("dgx-a100-80gb-mig", mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	offers, err := migOffers(context.Background(), &out, offering{b}, n)
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) != 6 || strings.Count(out.String(), "; 1 differences from the MIG table\n  3g.40gb at memory slot 4: in the MIG table, not offered by the GPU\n") != 6 {
		t.Errorf("%d offers, output:\n%s", len(offers), out.String())
	}
}
