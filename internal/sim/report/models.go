// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// byModelTable shows each policy's mean GPU allocation per GPU model.
func byModelTable(r *engine.Report) string {
	type model struct {
		name        string
		nodes, gpus int
	}
	var models []model
	seen := map[string]bool{}
	for _, x := range r.Results {
		for _, m := range x.ByModel {
			if !seen[m.Model] {
				seen[m.Model] = true
				models = append(models, model{m.Model, m.Nodes, m.GPUs})
			}
		}
	}
	if len(models) == 0 || !allocatedAtEnd(r) {
		return ""
	}
	sort.Slice(models, func(a, b int) bool { return models[a].name < models[b].name })
	ratio := func(name string) func(engine.Result) float64 {
		return func(x engine.Result) float64 {
			for _, m := range x.ByModel {
				if m.Model == name {
					return m.AllocationRatio
				}
			}
			return 0
		}
	}
	var b strings.Builder
	b.WriteString(`<h2>GPU allocation by GPU model` + html.EscapeString(modeLabel(r)) + `</h2><div class="wrap"><table id="bymodel"><tr><th>policy</th>`)
	for _, m := range models {
		fmt.Fprintf(&b, "<th>%s<br><span class=\"sd\">%s, %s</span></th>", html.EscapeString(m.name), count(m.nodes, "node"), count(m.gpus, "GPU"))
	}
	b.WriteString("</tr>")
	means := make([][]float64, len(r.Summary))
	for i, s := range r.Summary {
		for _, m := range models {
			means[i] = append(means[i], statOf(r, s.Policy, ratio(m.name)).Mean)
		}
	}
	for i, s := range r.Summary {
		fmt.Fprintf(&b, "<tr><td>%s</td>", html.EscapeString(s.Policy))
		for j := range models {
			best, differ := true, false
			for k := range r.Summary {
				if pct(means[k][j]) != pct(means[i][j]) {
					differ = true
					if means[k][j] > means[i][j] {
						best = false
					}
				}
			}
			best = best && differ
			class := ""
			if best {
				class = ` class="best"`
			}
			fmt.Fprintf(&b, "<td%s>%s</td>", class, pct(means[i][j]))
		}
		b.WriteString("</tr>")
	}
	end := "at the end of the run"
	if r.Mode == "replay" {
		end = "at the end of the replay"
	}
	fmt.Fprintf(&b, `</table></div><p class="note">Allocated share of each model's GPUs %s, %%, mean over seeds; highest of each model in bold.</p>`, end)
	return b.String()
}

// allocatedAtEnd tells whether any run ends with GPUs allocated; a replay
// usually ends with an empty cluster, and pictures of it say nothing.
func allocatedAtEnd(r *engine.Report) bool {
	for _, x := range r.Results {
		if x.AllocatedGPUMilli > 0 {
			return true
		}
	}
	return false
}
