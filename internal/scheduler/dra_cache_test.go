// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/structured"

	apidra "github.com/gpuplane/gpuplane/api/dra"
)

// TestDRACacheRebuilds walks the plugin's DRA cache through hand-worked
// steps on three nodes: n1 with four shared GPUs (gpu-0..3, 80Gi each),
// n2 with two whole GPUs, n3 with one MIG-mode A100-80GB (every
// placement published, migSlices). After each step the nodes rebuilt are
// the ones named by hand (those whose slices or allocated devices
// changed), the nodes reported changed are those whose view differs, the
// view equals buildDRAView's full rebuild of the same input, and the
// node cache given the changes (updateDRA) holds that view.
func TestDRACacheRebuilds(t *testing.T) {
	n1 := draSlice("n1-0", "n1", 1, true, 0, 1, 2, 3)
	n2 := draSlice("n2-0", "n2", 1, false, 0, 1)
	n2b := draSlice("n2-1", "n2", 1, false, 2, 3)
	other := draSlice("n1-nic", "n1", 1, false, 9)
	other.Spec.Driver = "nic.example.com"
	r := &cacheRun{t: t, c: newDRACache(), nc: newNodeCache(), st: allocated("")}
	r.sl = append([]*resourceapi.ResourceSlice{n1, n2}, migSlices(t, "n3", 1)...)
	st, step, gpus, c, nc := r.st, r.step, r.gpus, r.c, r.nc
	id := func(node, dev string) structured.DeviceID {
		return structured.MakeDeviceID(apidra.DriverName, node, dev)
	}

	step("first cycle", "n1,n2,n3", "n1,n2,n3")
	if !c.view["n3"].gpus[0].mig || gpus("n3") != "gpu-0:0" {
		t.Errorf("n3: %+v, want one MIG-mode GPU gpu-0", c.view["n3"].gpus)
	}
	r.sl = append(r.sl, other)
	step("nothing of gpu.nvidia.com changed (a NIC slice added)", "", "")

	r.sl = append(r.sl, n2b)
	step("slice n2-1 added", "n2", "n2")
	if got := gpus("n2"); got != "gpu-0:0 gpu-1:0 gpu-2:0 gpu-3:0" {
		t.Errorf("n2 after its second slice: %s", got)
	}
	before := c.view["n2"]

	st.AllocatedDevices.Insert(id("n2", "gpu-1"))
	step("n2's gpu-1 allocated whole", "n2", "n2")
	if got := gpus("n2"); got != "gpu-0:0 gpu-1:1000 gpu-2:0 gpu-3:0" {
		t.Errorf("n2 with gpu-1 allocated: %s", got)
	}
	// A claim of 300 milliGPU on n1's shared gpu-0 holds 300 of its 1000.
	st.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id("n1", "gpu-0"),
		map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("300")}))
	step("300 milliGPU of n1's gpu-0 allocated", "n1", "n1")
	if got := gpus("n1"); got != "gpu-0:300 gpu-1:0 gpu-2:0 gpu-3:0" {
		t.Errorf("n1 with a share: %s", got)
	}

	st.AllocatedDevices.Delete(id("n2", "gpu-1"))
	step("n2's gpu-1 deallocated", "n2", "n2")
	if !c.view["n2"].equal(before) {
		t.Errorf("n2 after deallocation: %s, want its view before the allocation", gpus("n2"))
	}

	r.sl[0] = n1.DeepCopy()
	step("n1's slice replaced by an equal copy (a relist)", "", "")

	n1 = draSlice("n1-0", "n1", 2, true, 0, 1, 2, 3, 4, 5)
	r.sl[0] = n1
	step("n1's slice updated, generation 2, six GPUs", "n1", "n1")
	if got := gpus("n1"); got != "gpu-0:300 gpu-1:0 gpu-2:0 gpu-3:0 gpu-4:0 gpu-5:0" {
		t.Errorf("n1 at generation 2: %s", got)
	}
	r.sl = append(r.sl, draSlice("n1-old", "n1", 1, true, 8))
	step("a slice of n1's older generation 1 added: ignored", "n1", "")

	r.sl = slices.DeleteFunc(r.sl, func(s *resourceapi.ResourceSlice) bool { return s == n2b })
	step("slice n2-1 deleted", "n2", "n2")
	if got := gpus("n2"); got != "gpu-0:0 gpu-1:0" {
		t.Errorf("n2 after n2-1 was deleted: %s", got)
	}
	r.sl = slices.DeleteFunc(r.sl, func(s *resourceapi.ResourceSlice) bool { return s == n2 })
	step("node n2 gone (its last slice deleted)", "n2", "n2")
	if _, ok := nc.dra["n2"]; ok || c.view["n2"] != nil {
		t.Error("n2 still in the view")
	}

	st.AllocatedDevices.Insert(id("n3", "gpu-0-mig-1g10gb-19-3"))
	step("MIG device gpu-0-mig-1g10gb-19-3 allocated on n3", "n3", "n3")
	if got := fmt.Sprint(c.view["n3"].gpus[0].migHeld); got != "[{gpu-0 1g.10gb 3}]" {
		t.Errorf("n3 holds %s, want [{gpu-0 1g.10gb 3}]", got)
	}
	st.AllocatedDevices.Delete(id("n3", "gpu-0-mig-1g10gb-19-3"))
	step("MIG device released", "n3", "n3")
	if len(c.view["n3"].gpus[0].migHeld) != 0 {
		t.Errorf("n3 holds %v, want nothing", c.view["n3"].gpus[0].migHeld)
	}
}

// cacheRun is TestDRACacheRebuilds's cache, node cache and input.
type cacheRun struct {
	t  *testing.T
	c  *draCache
	nc *nodeCache
	sl []*resourceapi.ResourceSlice
	st *structured.AllocatedState
}

// step updates the cache and checks the nodes it rebuilt and changed
// (comma-separated, sorted), its view against buildDRAView's and the
// node cache's against its.
func (r *cacheRun) step(name, rebuilt, changed string) {
	r.t.Helper()
	ch := r.c.update(r.sl, r.st)
	r.nc.updateDRA(ch)
	if got := strings.Join(r.c.rebuilt, ","); got != rebuilt {
		r.t.Errorf("%s: rebuilt %q, want %q", name, got, rebuilt)
	}
	if got := strings.Join(slices.Sorted(maps.Keys(ch)), ","); got != changed {
		r.t.Errorf("%s: changed %q, want %q", name, got, changed)
	}
	full := buildDRAView(r.sl, r.st)
	if !maps.EqualFunc(r.c.view, full, (*draNode).equal) || !maps.Equal(r.c.view, r.nc.dra) {
		r.t.Errorf("%s: cache %s, node cache %s, full rebuild %s", name, viewString(r.c.view), viewString(r.nc.dra), viewString(full))
	}
}

// gpus is a node's GPUs in the cache's view, "name:used milli-GPU" each.
func (r *cacheRun) gpus(node string) string {
	if r.c.view[node] == nil {
		return "none"
	}
	var out []string
	for _, g := range r.c.view[node].gpus {
		out = append(out, fmt.Sprintf("%s:%d", g.name, g.used))
	}
	return strings.Join(out, " ")
}

// viewString prints a view's nodes in name order, every GPU's fields.
func viewString(v draView) string {
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(v)) {
		fmt.Fprintf(&b, "%s:%+v ", n, v[n].gpus)
	}
	return b.String()
}
