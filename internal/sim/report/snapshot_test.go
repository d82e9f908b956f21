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
	if !strings.Contains(page, "<td>ns/p299</td>") || strings.Contains(page, "<td>ns/p300</td>") || !strings.Contains(page, "… 2 more pods in report.json") {
		t.Error("page: rows 0..299 and a note of 2 more expected")
	}
	if !strings.Contains(page, "<td>– no_room (0/3)</td>") {
		t.Error("page lacks the failed pod's reason")
	}
}

// TestSnapshotPodGrid: each pod is one row and each policy one column
// (issue 33: the per-pod table repeated each pod per policy), cells as
// written by hand.
func TestSnapshotPodGrid(t *testing.T) {
	r := &engine.Report{SnapshotPods: []engine.PodOutcome{
		{Pod: "ml/a", Policy: "fgd", Placed: 3, Runs: 3, Node: "n1", GPUs: []int{0, 1}},
		{Pod: "ml/b", Policy: "fgd", Placed: 0, Runs: 3, Reason: "too_large"},
		{Pod: "ml/a", Policy: "bestfit", Placed: 2, Runs: 3, Node: "n2", GPUs: []int{3}},
		{Pod: "ml/b", Policy: "bestfit", Placed: 1, Runs: 3, Node: "n0"},
	}}
	got := snapshotPodsTable(r)
	for _, want := range []string{
		"<tr><th>pod</th><th>fgd</th><th>bestfit</th></tr>",
		"<tr><td>ml/a</td><td>n1 GPUs 0,1 (3/3)</td><td>n2 GPUs 3 (2/3)</td></tr>",
		"<tr><td>ml/b</td><td>– too_large (0/3)</td><td>n0 (1/3)</td></tr>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("grid lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "<td>ml/a</td>"); n != 1 {
		t.Errorf("ml/a in %d rows, want 1", n)
	}
}
