// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"strings"
	"testing"
)

// TestNotModelledLeftOut: a valid pod whose GPU request the simulator
// does not model (two nvidia.com/mig-3g.40gb devices; two time-sliced
// replicas) is left out with a warning naming the pod, its line and the
// request; the snapshot is still read, and the other pod with it.
func TestNotModelledLeftOut(t *testing.T) {
	node := `{"kind":"Node","metadata":{"name":"a","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"2","nvidia.com/mig.strategy":"mixed"}},` +
		`"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/mig-3g.40gb":"4"}}}`
	pod := func(name, phase, node, res string) string {
		return `{"kind":"Pod","metadata":{"name":"` + name + `","namespace":"ns"},"spec":{"nodeName":"` + node + `","containers":[{"name":"c","resources":{"requests":{"cpu":"1",` + res + `}}}]},"status":{"phase":"` + phase + `"}}`
	}
	s, err := Read("s.json", strings.NewReader(list(node,
		pod("two-mig", "Pending", "", `"nvidia.com/mig-3g.40gb":"2"`),
		pod("two-replicas", "Running", "a", `"nvidia.com/gpu.shared":"2"`),
		pod("one-mig", "Running", "a", `"nvidia.com/mig-3g.40gb":"1"`))))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 || s.Pods[0].Name != "ns/one-mig" {
		t.Fatalf("pods %+v, want ns/one-mig alone", s.Pods)
	}
	all := strings.Join(s.Warnings, "\n")
	for _, want := range []string{
		`s.json:1: items[1].spec.containers: pod "ns/two-mig" asks for nvidia.com/mig-3g.40gb 2: one MIG device of a profile <1..7>g.*, and no other GPU request, is what the simulator models: left out of the simulation`,
		`s.json:1: items[2].spec.containers: pod "ns/two-replicas" asks for nvidia.com/gpu.shared 2: one replica`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in\n%s", want, all)
		}
	}
}
