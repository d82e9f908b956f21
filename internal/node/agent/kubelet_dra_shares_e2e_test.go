// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// draOneGPU is a node of one H100 80GB (81920 MiB in the GPU catalog),
// realProfile's GPU 0.
const draOneGPU = `name: dra-one
gpus:
  - {productName: NVIDIA H100 80GB HBM3, numaNode: 0, uuid: GPU-00000000-0000-4000-8000-000000000000}
`

// shareOf checks the pod's claim got a share of gpu-0: one result with a
// share ID, consuming exactly milli milliGPU and mem memory, and that its
// container got GPU 0's CDI device and GPUPLANE_GPU_SHARE=held (the
// larger of milli and mem's thousandths of 81920Mi); it returns the
// share ID.
func (d *draEnv) shareOf(pod, milli, mem, held string) string {
	d.t.Helper()
	c, err := d.claim(pod)
	if err != nil {
		d.fail("%v", err)
	}
	if c.Status.Allocation == nil || len(c.Status.Allocation.Devices.Results) != 1 {
		d.fail("pod %s: claim %s allocation %+v, want one result", pod, c.Name, c.Status.Allocation)
	}
	r := c.Status.Allocation.Devices.Results[0]
	if r.Device != "gpu-0" || r.ShareID == nil {
		d.fail("pod %s: result %+v, want a share of gpu-0", pod, r)
	}
	for name, want := range map[string]string{"milliGPU": milli, "memory": mem} {
		got := r.ConsumedCapacity[resourcev1.QualifiedName(name)]
		if got.Cmp(resource.MustParse(want)) != 0 {
			d.t.Errorf("pod %s: consumed %s %s, want %s", pod, name, got.String(), want)
		}
	}
	// The GPU, and the claim's own device whose spec sets
	// GPUPLANE_GPU_SHARE to the share.
	want := []string{"nvidia.com/gpu=" + realUUID(0), "gpuplane.io/claim=" + string(c.UID) + "-gpu-0"}
	if rec := d.record(pod); !slices.Equal(rec.CDIDevices, want) {
		d.t.Errorf("pod %s: CDI devices %v, want %v", pod, rec.CDIDevices, want)
	}
	spec, err := os.ReadFile(filepath.Join(d.cdiDir, "gpuplane_claim_"+string(c.UID)+"-gpu-0.json"))
	if err != nil || !strings.Contains(string(spec), `"GPUPLANE_GPU_SHARE=`+held+`"`) {
		d.t.Errorf("pod %s: claim CDI spec %s, %v; want GPUPLANE_GPU_SHARE=%s", pod, spec, err, held)
	}
	return string(*r.ShareID)
}

// TestRealKubeletDRAShares: with --dra-shares the one GPU is published
// with allowMultipleAllocations and the capacities milliGPU (1000,
// default 1) and memory (81920Mi, default all). Worked out from those:
//   - two claims of milliGPU 500 and memory 20Gi run on it, each its own
//     share; a third such claim waits: 1500 milliGPU exceed 1000 (its
//     60Gi of memory would fit);
//   - with those gone, two claims of memory 40Gi alone, as NVIDIA's
//     driver's memory shares ask it, run, each consuming milliGPU's
//     default 1; a third asking milliGPU 100 and memory 1Mi waits: 80Gi +
//     1Mi exceed 81920Mi (102 milliGPU would fit);
//   - a claim that asks only milliGPU 100 gets the default of memory, all
//     81920Mi: with one 40Gi claim left it waits; alone it runs, holding
//     all the memory.
func TestRealKubeletDRAShares(t *testing.T) {
	d := startDRAEnv(t, draOneGPU, "--dra-shares")
	d.createTemplate("half", "gpu.nvidia.com", map[string]string{"milliGPU": "500", "memory": "20Gi"})
	for _, p := range []string{"h0", "h1"} {
		d.createClaimPod(p, "half")
		d.waitRunning(p)
	}
	if a, b := d.shareOf("h0", "500", "20Gi", "500"), d.shareOf("h1", "500", "20Gi", "500"); a == b {
		t.Errorf("h0 and h1 share ID %s", a)
	}
	d.createClaimPod("h2", "half")
	t.Logf("third milliGPU 500 claim: %s", d.waitUnschedulable("h2"))
	for _, p := range []string{"h0", "h1", "h2"} {
		d.deletePod(p)
	}

	d.createTemplate("mem", "gpu.nvidia.com", map[string]string{"memory": "40Gi"})
	d.createTemplate("mem-1mi", "gpu.nvidia.com", map[string]string{"milliGPU": "100", "memory": "1Mi"})
	for _, p := range []string{"g0", "g1"} {
		d.createClaimPod(p, "mem")
		d.waitRunning(p)
		d.shareOf(p, "1", "40Gi", "500") // 40960/81920
	}
	d.createClaimPod("g2", "mem-1mi")
	t.Logf("a claim of 1Mi more memory: %s", d.waitUnschedulable("g2"))
	d.deletePod("g2")
	d.deletePod("g1")

	d.createTemplate("milli-only", "gpu.nvidia.com", map[string]string{"milliGPU": "100"})
	d.createClaimPod("o", "milli-only")
	t.Logf("milliGPU only, beside a 40Gi claim: %s", d.waitUnschedulable("o"))
	d.deletePod("g0")
	d.waitRunning("o")
	d.shareOf("o", "100", "81920Mi", "1000")
}
