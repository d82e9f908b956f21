// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// TestSnapshotPods: the table and the page list where each snapshot pod
// went; the page stops at 300 rows and says how many are left.
func TestSnapshotPods(t *testing.T) {
	r := sample()
	for i := range 302 {
		o := engine.PodOutcome{Pod: fmt.Sprintf("ns/p%d", i), Policy: "fgd", Placed: 2, Runs: 3, Node: "n1", GPUs: []int{0, 3}}
		if i == 1 {
			o = engine.PodOutcome{Pod: "ns/p1", Policy: "fgd", Runs: 3, Reason: engine.ReasonNoRoom}
		}
		r.SnapshotPods = append(r.SnapshotPods, o)
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(b.String(), "\n") {
		rows = append(rows, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{"ns/p0 fgd n1 0,3 2/3", "ns/p1 fgd - (no_room) 0/3"} {
		if !strings.Contains(strings.Join(rows, "\n"), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String()[:600])
		}
	}
	page := string(HTML(r))
	if !strings.Contains(page, "<td>ns/p299</td>") || strings.Contains(page, "<td>ns/p300</td>") || !strings.Contains(page, "… 2 more rows in report.json") {
		t.Error("page: rows 0..299 and a note of 2 more expected")
	}
	if !strings.Contains(page, "<td>– (no_room)</td>") {
		t.Error("page lacks the failed pod's reason")
	}
}
