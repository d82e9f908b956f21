// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// TestWarningsInReports: every warning a snapshot run prints on stderr
// (the bundled snapshot has a pod asking for an H100, which no node has)
// is in the JSON report's warnings and in the HTML report, in order; and
// the snapshot's HTML report, a workload placed once, has no chart of
// allocation as demand arrives.
func TestWarningsInReports(t *testing.T) {
	o := DefaultOptions()
	o.SnapshotFile, o.Policies, o.Seeds, o.Sharing, o.Format = example, "fgd", 1, "exclusive,fractional", "json"
	o.OutDir = t.TempDir()
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var printed []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if msg, ok := strings.CutPrefix(l, warnPrefix); ok {
			printed = append(printed, msg)
		}
	}
	if len(printed) == 0 {
		t.Fatalf("no warning printed:\n%s", stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Warnings, "\n") != strings.Join(printed, "\n") {
		t.Errorf("JSON warnings %q, stderr %q", rep.Warnings, printed)
	}
	page, err := os.ReadFile(filepath.Join(o.OutDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	h := string(page)
	for _, w := range printed {
		if !strings.Contains(h, "<li>"+html.EscapeString(w)+"</li>") {
			t.Errorf("HTML lacks warning %q", w)
		}
	}
	if strings.Contains(h, "as demand arrives") || strings.Contains(h, "GPU allocation by sharing mode") {
		t.Error("a snapshot's report draws allocation as demand arrives")
	}
}

// TestWarningsNone: a run without warnings has an empty list, not none.
func TestWarningsNone(t *testing.T) {
	o := DefaultOptions()
	o.NodesFile, o.PodsFile, o.Policies, o.Seeds = "../../../docs/examples/size-cluster.yaml", "../../../docs/examples/size-pods.csv", "fgd", 1
	o.Format = "json"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr.String(), warnPrefix) {
		t.Skipf("the example warns: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), `"warnings": []`) {
		t.Errorf("JSON lacks an empty warnings list")
	}
}

// TestWarningsCollector: a warning split over writes and one after a
// progress line's \r are kept; other lines are not.
func TestWarningsCollector(t *testing.T) {
	var out strings.Builder
	c := &warnings{w: &out}
	for _, s := range []string{"simulate: warn", "ing: a\nprogress 1/3\rsimulate: warning: b\n", "simulate: wrote x\n", "simulate: warning: c"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := strings.Join(c.list(), "|"); got != "a|b|c" {
		t.Errorf("kept %q, want a|b|c", got)
	}
	if !strings.HasPrefix(out.String(), "simulate: warning: a\nprogress") {
		t.Errorf("not passed through: %q", out.String())
	}
}
