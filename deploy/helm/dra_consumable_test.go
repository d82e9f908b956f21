// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestTemplateDRAConsumableShares: nodeAgent.dra.consumableShares passes
// NVIDIA's --consumable-shares modes (memory, unlimited, a count; the
// agent takes 1..1000) to the agent as --dra-consumable-shares, a number
// as --set writes it included; anything else is refused at render time;
// empty, no flag.
func TestTemplateDRAConsumableShares(t *testing.T) {
	for _, v := range []string{"memory", "unlimited", "4", "1000"} {
		_, c := agent(t, render(t, "--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.consumableShares="+v))
		if !slices.Contains(c.Args, "--dra-consumable-shares="+v) {
			t.Errorf("%s: args %v", v, c.Args)
		}
	}
	if _, c := agent(t, render(t, "--set", "nodeAgent.kubeletAPI=dra")); slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--dra-consumable-shares") }) {
		t.Errorf("default: args %v", c.Args)
	}
	for _, bad := range []string{"0", "1001", "disabled", "4x"} {
		out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.consumableShares="+bad)...).CombinedOutput()
		if want := `nodeAgent.dra.consumableShares: "` + bad + `"`; err == nil || !strings.Contains(string(out), want) {
			t.Errorf("%s: %v %s, want %q", bad, err, out, want)
		}
	}
}

// TestTemplateDRAMIGOrder: nodeAgent.dra.migOrder passes
// --dra-mig-order, core by default, table when set; anything else is
// refused at render time.
func TestTemplateDRAMIGOrder(t *testing.T) {
	for _, tc := range []struct{ set, want string }{{"", "--dra-mig-order=core"}, {"table", "--dra-mig-order=table"}, {"core", "--dra-mig-order=core"}} {
		args := []string{"--set", "nodeAgent.kubeletAPI=dra"}
		if tc.set != "" {
			args = append(args, "--set", "nodeAgent.dra.migOrder="+tc.set)
		}
		if _, c := agent(t, render(t, args...)); !slices.Contains(c.Args, tc.want) {
			t.Errorf("%q: args %v lack %s", tc.set, c.Args, tc.want)
		}
	}
	if _, c := agent(t, render(t)); slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--dra-mig-order") }) {
		t.Errorf("device plugin: args %v", c.Args)
	}
	out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.migOrder=first")...).CombinedOutput()
	if want := `nodeAgent.dra.migOrder: "first"; want core or table`; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("first: %v %s, want %q", err, out, want)
	}
}
