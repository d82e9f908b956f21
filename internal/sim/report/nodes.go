// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// heat bins a node's allocated share (per mille) into a colour: grey idle,
// blue full, and shades of orange for the partly allocated nodes, where
// fragmentation lives.
var heat = []struct {
	upTo  int
	color string
	label string
}{{0, "#e4e4e4", "idle"}, {250, "#fdd0a2", "≤ 25%"}, {500, "#fdae6b", "≤ 50%"}, {750, "#f16913", "≤ 75%"}, {999, "#a63603", "< 100%"}, {1000, "#08306b", "full"}}

func heatColor(permille int) string {
	for _, h := range heat {
		if permille <= h.upTo {
			return h.color
		}
	}
	return heat[len(heat)-1].color
}

// nodePictures draws, for each policy's first seed, every GPU node as a
// cell coloured by its allocated share, grouped by GPU model.
func nodePictures(r *engine.Report) string {
	var figs []string
	for _, s := range r.Summary {
		var first *engine.Result
		for i := range r.Results {
			x := &r.Results[i]
			if x.Policy == s.Policy && len(x.ByModel) > 0 && x.ByModel[0].NodeAllocation != nil {
				first = x
				break
			}
		}
		if first == nil {
			continue
		}
		figs = append(figs, fmt.Sprintf(`<figure><figcaption>%s, seed %d</figcaption>%s</figure>`, html.EscapeString(s.Policy), first.Seed, nodeGrid(first.ByModel)))
	}
	if len(figs) == 0 || !allocatedAtEnd(r) {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Nodes at the end of the run` + html.EscapeString(modeLabel(r)) + `</h2><p class="note">Each cell is one GPU node, coloured by the share of its GPUs allocated: `)
	for _, h := range heat {
		fmt.Fprintf(&b, `<svg width="12" height="12" style="display:inline;vertical-align:middle"><rect width="12" height="12" fill="%s"/></svg> %s &nbsp;`, h.color, html.EscapeString(h.label))
	}
	b.WriteString(`Nodes grouped by GPU model, most allocated first. First seed of each policy.</p><div class="nodes">`)
	b.WriteString(strings.Join(figs, ""))
	b.WriteString("</div>")
	return b.String()
}

// nodeGrid is one policy's picture: a label per model, then its nodes.
func nodeGrid(models []engine.ModelUse) string {
	const W, cell, pitch, label = 360, 5, 6, 16
	cols := W / pitch
	y := 0
	var body strings.Builder
	for _, m := range models {
		fmt.Fprintf(&body, `<text x="0" y="%d" font-size="11">%s: %s, %s%% of GPUs allocated</text>`, y+11, html.EscapeString(clip(m.Model, 24)), count(m.Nodes, "node"), pct(m.AllocationRatio))
		y += label
		// Nodes are sorted, so a colour is a run of cells: one dashed line
		// per run and grid row draws them.
		for i := 0; i < len(m.NodeAllocation); {
			c := heatColor(m.NodeAllocation[i])
			j := i + 1
			for j < len(m.NodeAllocation) && j%cols != 0 && heatColor(m.NodeAllocation[j]) == c {
				j++
			}
			cy := y + (i/cols)*pitch + cell/2
			fmt.Fprintf(&body, `<line class="nodes" data-nodes="%d" x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%d" stroke-dasharray="%d %d"/>`,
				j-i, (i%cols)*pitch, cy, (i%cols)*pitch+(j-i)*pitch-(pitch-cell), cy, c, cell, cell, pitch-cell)
			i = j
		}
		y += (len(m.NodeAllocation)+cols-1)/cols*pitch + 6
	}
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" font-family="sans-serif">%s</svg>`, W, y, W, y, body.String())
}
