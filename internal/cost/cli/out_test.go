// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "report")
	o := Options{OpenMetrics: dayFile, By: "team", Format: "table", TeamsFile: teamsFile(t), Out: dir}
	table, stderr, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "report: "+filepath.Join(dir, "index.html")) || !strings.Contains(table, "research") {
		t.Errorf("stdout %q, stderr %q", table, stderr)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	o.Format, o.Out = "json", ""
	want, _, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != want {
		t.Errorf("report.json differs from --format json:\n%s\n%s", js, want)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	// The day's figures (costcli_test.go): $818.16 in all; team research
	// 283.12 USD; web/infer-1's right-sizing, 3g.40gb saving 113.76 USD of
	// 199.08 (rightsize_test.go).
	for _, s := range []string{"$818.16", "research", "$283.12", `<tr><td class="name">web/infer-1</td><td>H100-80GB</td><td>1 GPU</td><td>0.300</td><td>9216</td><td>$199.08</td><td>3g.40gb</td><td>$113.76</td>`} {
		if !strings.Contains(string(page), s) {
			t.Errorf("index.html lacks %q", s)
		}
	}

	// An existing report is kept without --force, nothing printed.
	o.Out = dir
	if out, _, err := run(t, o); err == nil || !strings.Contains(err.Error(), "already holds a report") || out != "" {
		t.Errorf("existing report: error %v, stdout %q", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Force = true
	if _, _, err := run(t, o); err != nil {
		t.Fatal(err)
	}
	if page, _ := os.ReadFile(filepath.Join(dir, "index.html")); !strings.Contains(string(page), "$818.16") {
		t.Error("--force did not overwrite index.html")
	}
}

// A run that fails after --out's check leaves no directory it created
// (findings 18), and keeps one that was there.
func TestOutFailed(t *testing.T) {
	tmp := t.TempDir()
	// A window without data fails after the check created a/b/report.
	o := Options{OpenMetrics: dayFile, From: "2026-12-01T00:00:00Z", To: "2026-12-02T00:00:00Z", By: "pod", Format: "table", Out: filepath.Join(tmp, "a", "b", "report")}
	if _, _, err := run(t, o); err == nil || !strings.Contains(err.Error(), "no node agent data") {
		t.Fatalf("error %v, want no node agent data", err)
	}
	if _, err := os.Lstat(filepath.Join(tmp, "a")); !os.IsNotExist(err) {
		t.Errorf("%s/a left behind (%v)", tmp, err)
	}
	o.Out = tmp
	if _, _, err := run(t, o); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Lstat(tmp); err != nil {
		t.Errorf("existing --out removed: %v", err)
	}
}
