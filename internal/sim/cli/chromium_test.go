// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReportsInChromium writes the HTML report of a fill, a replay, a
// fill under four sharing modes and a --size search of the bundled sizing
// example (docs/examples/size-cluster.yaml, size-pods.csv) through Run,
// as gpuplane simulate --out does, renders each in headless Chromium
// (--dump-dom) and checks that the rendered page shows the
// recommendation the table printed (policy, sharing mode, USD per month)
// and, under --sharing, the chart of the chosen policy across modes and
// every mode's own sections. Set
// GPUPLANE_REPORT_SHOTS to a directory to keep an 800-pixel screenshot of
// the top of each page (docs/simulate-*-800.png). Skipped without
// chromium, unless CI is set.
func TestReportsInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but chromium is not installed")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + filepath.Join(dir, "profile")}
	sharing := []string{"exclusive", "fractional", "mig", "timeslice:2"}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want []string
	}{
		{"fill", func(o *Options) {}, []string{"<h2>Summary</h2>", "GPU allocation as demand arrives"}},
		{"replay", func(o *Options) { o.Mode = "replay" }, []string{"<h2>Summary</h2>", "Pods waiting over time"}},
		{"sharing", func(o *Options) { o.Sharing = strings.Join(sharing, ",") }, nil},
		{"size", func(o *Options) { o.Mode, o.Size = "replay", "p95wait<=30m" }, []string{"Nodes to add, per node type and policy", "Curve searched"}},
	} {
		o := DefaultOptions()
		o.NodesFile, o.PodsFile = "../../../docs/examples/size-cluster.yaml", "../../../docs/examples/size-pods.csv"
		o.Policies, o.OutDir = "fgd,bestfit,leastallocated", filepath.Join(dir, tc.name)
		tc.edit(&o)
		var stdout, stderr strings.Builder
		if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, stderr.String())
		}
		// The table's recommendation line and cost line.
		// A tie reads "no policy differs on this workload: keep yours".
		m := regexp.MustCompile(`recommendation \(([^)]*)\): (\S+|no policy differs on this workload: keep yours), sharing (\S+)\n  cluster: [^\n]*\n(?:    [^\n]*\n)*  cost: (\S+) USD per month`).FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("%s: no recommendation in the table:\n%s", tc.name, stdout.String())
		}
		choice := fmt.Sprintf("Choice: <b>%s</b>, sharing <b>%s</b>.", m[2], m[3])
		if strings.Contains(m[2], "keep yours") {
			choice = fmt.Sprintf("Choice: <b>%s, sharing %s</b>.", m[2], m[3])
		}
		want := append([]string{`<div id="recommendation" class="lead"><h2>Recommendation</h2>`,
			fmt.Sprintf("Goal: %s. %s", html.EscapeString(m[1]), choice),
			fmt.Sprintf("Cost: <b>%s USD per month</b>", m[4])}, tc.want...)
		if tc.name == "sharing" {
			want = append(want, "<h2>Sharing modes</h2>", "<h2>GPU allocation by sharing mode ("+m[2]+")</h2>")
			for k, s := range sharing {
				a := modeAnchorOf(s)
				want = append(want, fmt.Sprintf(`<section id="%s"><h2 class="mode">Sharing mode %s (%d of 4)</h2>`, a, s, k+1),
					fmt.Sprintf(`<a href="#%s">%s</a>`, a, s), fmt.Sprintf("<h2>Summary (sharing %s)</h2>", s),
					fmt.Sprintf(`<table id="summary-%s">`, a), fmt.Sprintf("<h2>GPU allocation as demand arrives (sharing %s)</h2>", s),
					fmt.Sprintf("<h2>Nodes at the end of the run (sharing %s)</h2>", s))
			}
		}
		page := "file://" + filepath.Join(o.OutDir, "index.html")
		cmd := append(append([]string{}, args...), "--window-size=800,1400", "--dump-dom")
		if keep := os.Getenv("GPUPLANE_REPORT_SHOTS"); keep != "" {
			cmd = append(cmd, "--screenshot="+filepath.Join(keep, "simulate-"+tc.name+"-800.png"))
		}
		dom, err := exec.Command(bin, append(cmd, page)...).Output()
		if err != nil {
			t.Fatalf("%s: chromium: %v", tc.name, err)
		}
		for _, w := range want {
			if !strings.Contains(string(dom), w) {
				t.Errorf("%s: the rendered page lacks %s", tc.name, w)
			}
		}
		// No id twice on the page (every mode's sections have their own).
		seen := map[string]bool{}
		for _, id := range regexp.MustCompile(` id="([^"]*)"`).FindAllStringSubmatch(string(dom), -1) {
			if seen[id[1]] {
				t.Errorf("%s: id %q twice", tc.name, id[1])
			}
			seen[id[1]] = true
		}
	}
}

// modeAnchorOf is report's anchor of a sharing mode's section.
func modeAnchorOf(mode string) string {
	return "mode-" + strings.NewReplacer(":", "-").Replace(mode)
}
