package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// A replay row: the wait
// columns in hours (5400 s = 1.50 h, 7200 s = 2.00 h); 1 of 4 training
// pods on a shared GPU is 25.00 %.
func TestSharingTable(t *testing.T) {
	r := &engine.Report{Source: "n + p", Mode: "replay", Nodes: 1, GPUs: 2, Pods: 4,
		Sharing: &engine.SharingReport{Rows: []engine.SharingRow{{Sharing: "timeslice:4", Policy: "fgd", Runs: 1, GPUAllocationRatio: 0.5,
			PlacedPods: 3, FailedPods: 1, GPUsNeeded: 2, USDPerHour: 2.5, QueueDelayMeanSeconds: 5400, QueueDelayP95Seconds: 7200,
			SharedPods: 2, TrainingPods: 4, TrainingOnSharedGPU: 1}},
			MIGLayouts: []engine.MIGLayoutUse{{Model: "A100-80GB", Nodes: 3, MIGGPUsPerNode: 2, GPUsPerNode: 8, Layout: []string{"4g.40gb", "3g.40gb"}, Source: "chosen"}}},
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.Contains(lines[0], "sharing timeslice:4") {
		t.Errorf("header %q does not name the first mode", lines[0])
	}
	if got, want := lines[len(lines)-1], "MIG layout (chosen): A100-80GB, 3 nodes: 2 of 8 GPUs each as 4g.40gb + 3g.40gb"; got != want {
		t.Errorf("layout line %q, want %q", got, want)
	}
	want := []string{"timeslice:4", "fgd", "1", "50.00", "3.0", "1.0", "2.0", "2.50", "1.50", "2.00", "2.0", "25.00"}
	if got := strings.Fields(lines[len(lines)-2]); !reflect.DeepEqual(got, want) {
		t.Errorf("row %q, want %q", got, want)
	}
	h := string(HTML(r))
	for _, s := range []string{`<h2>Sharing modes</h2>`, `<td>timeslice:4</td>`, `<td>25.00</td>`, "4g.40gb + 3g.40gb"} {
		if !strings.Contains(h, s) {
			t.Errorf("HTML lacks %q", s)
		}
	}
}
