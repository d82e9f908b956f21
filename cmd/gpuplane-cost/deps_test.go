package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCostDeps keeps gpuplane cost off the simulator, as TestOfflineDeps
// (cmd/gpuplane) keeps the offline tool off Kubernetes: it must link no
// internal/sim package and not internal/placement. The cost report shares
// only the chart kit and the report-directory writes (internal/htmlkit)
// with the simulator's report.
func TestCostDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	const mod = "github.com/gpuplane/gpuplane/"
	for _, d := range deps {
		for _, banned := range []string{mod + "internal/sim", mod + "internal/placement"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("cmd/gpuplane-cost depends on %s", d)
			}
		}
	}
}
