// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// reasons explain sim's failure reasons.
var reasons = map[string]string{
	engine.ReasonNoRoom:     "no room",
	engine.ReasonTooLarge:   "larger than every node",
	engine.ReasonNoModel:    "no node of its GPU models",
	engine.ReasonNoGPUNodes: "no node has GPUs",
	engine.ReasonNoResource: "no node serves its GPU resource",
	engine.ReasonDeleted:    "deleted while waiting",
}

// shape describes a failed pod group's requests as HTML: GPUs, then the
// allowed models (breakable after each |), then CPU cores and memory.
func shape(g engine.FailedGroup) string {
	gpu := "no GPU"
	if g.NumGPU > 0 {
		gpu = fmt.Sprintf("%d × %s GPU", g.NumGPU, strconv.FormatFloat(float64(g.GPUMilli)/cluster.MilliGPU, 'f', -1, 64))
		if g.GPUSpec != "" {
			gpu += " (" + strings.ReplaceAll(html.EscapeString(clip(g.GPUSpec, 40)), "|", "|<wbr>") + ")"
		}
	}
	return fmt.Sprintf("%s,<br>%s CPU, %s GiB", gpu, strconv.FormatFloat(float64(g.CPUMilli)/1000, 'f', -1, 64), strconv.FormatFloat(math.Round(float64(g.MemoryMiB)/1024*10)/10, 'f', -1, 64))
}

// failedShapes is how many pod shapes the failed-pods table shows.
const failedShapes = 5

// failedTable shows, per policy, the failed pods per run: all of them and
// the most frequent shapes and reasons.
func failedTable(r *engine.Report) string {
	anyFailed := false
	for _, x := range r.Results {
		anyFailed = anyFailed || x.FailedPods > 0 || len(x.Failed) > 0
	}
	if !anyFailed {
		return ""
	}
	keys, other := failedKeys(r)
	var b strings.Builder
	what := "failed pods"
	if r.Mode == "replay" {
		what = "never started"
	}
	fmt.Fprintf(&b, `<h2>Failed pods`+html.EscapeString(modeLabel(r))+`</h2><div class="wrap"><table id="failed"><tr><th>policy</th><th>%s, all</th>`, what)
	for _, k := range keys {
		why := reasons[k.reason]
		if why == "" {
			why = k.reason
		}
		fmt.Fprintf(&b, `<th>%s<br><span class="sd">%s</span></th>`, shape(k.g), html.EscapeString(why))
	}
	if other {
		b.WriteString("<th>other shapes</th>")
	}
	b.WriteString("</tr>")
	for _, s := range r.Summary {
		failedRow(&b, r, s.Policy, keys, other)
	}
	b.WriteString(`</table></div><p class="note">Pods per run, mean over seeds, by shape (GPUs × share of each, CPU cores, memory) and reason.`)
	if len(keys) == 0 {
		b.WriteString(" This run recorded no breakdown by shape.")
	}
	b.WriteString("</p>")
	return b.String()
}

// failedKey is a shape of failed pod (FailedGroup less its count) and why
// it failed.
type failedKey struct {
	reason string
	g      engine.FailedGroup
}

// failedKeys returns the shapes and reasons of r's failed pods, most pods
// first, at most failedShapes of them, and whether there were more.
func failedKeys(r *engine.Report) ([]failedKey, bool) {
	total := map[failedKey]int{}
	for _, x := range r.Results {
		for _, g := range x.Failed {
			k := g
			k.Pods = 0
			total[failedKey{g.Reason, k}] += g.Pods
		}
	}
	keys := make([]failedKey, 0, len(total))
	for k := range total {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if total[keys[a]] != total[keys[b]] {
			return total[keys[a]] > total[keys[b]]
		}
		return shape(keys[a].g)+keys[a].reason < shape(keys[b].g)+keys[b].reason
	})
	other := len(keys) > failedShapes
	if other {
		keys = keys[:failedShapes]
	}
	return keys, other
}

// failedRow writes policy's row, if it has runs: its failed pods per run,
// all and by each of keys, then with other those of the other shapes.
func failedRow(b *strings.Builder, r *engine.Report, policy string, keys []failedKey, other bool) {
	runs := runsOf(r, policy)
	if len(runs) == 0 {
		return
	}
	n := float64(len(runs))
	all := statOf(r, policy, func(x engine.Result) float64 { return float64(x.FailedPods) }).Mean
	fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td>", html.EscapeString(policy), num1(all))
	shown := 0.0
	for _, k := range keys {
		c := 0
		for _, x := range runs {
			for _, g := range x.Failed {
				if g.Reason == k.reason && g.CPUMilli == k.g.CPUMilli && g.MemoryMiB == k.g.MemoryMiB && g.NumGPU == k.g.NumGPU && g.GPUMilli == k.g.GPUMilli && g.GPUSpec == k.g.GPUSpec {
					c += g.Pods
				}
			}
		}
		shown += float64(c) / n
		fmt.Fprintf(b, "<td>%s</td>", num1(float64(c)/n))
	}
	if other {
		rest := 0
		for _, x := range runs {
			for _, g := range x.Failed {
				rest += g.Pods
			}
		}
		fmt.Fprintf(b, "<td>%s</td>", num1(float64(rest)/n-shown))
	}
	b.WriteString("</tr>")
}

// failedClassesTable shows, per policy, the failed pods per run by class
// (engine.FailureClass): what would have to change for them to place.
// "" when no pod failed.
func failedClassesTable(r *engine.Report) string {
	var classes []string
	for _, c := range engine.FailureClasses {
		for _, s := range r.Summary {
			if s.FailedByClass[c] > 0 {
				classes = append(classes, c)
				break
			}
		}
	}
	if len(classes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Failed pods by class` + html.EscapeString(modeLabel(r)) + `</h2><div class="wrap"><table id="failed-classes"><tr><th>policy</th>`)
	for _, c := range classes {
		b.WriteString("<th>" + html.EscapeString(c) + "</th>")
	}
	b.WriteString("</tr>")
	for _, s := range r.Summary {
		b.WriteString("<tr><td>" + html.EscapeString(s.Policy) + "</td>")
		for _, c := range classes {
			b.WriteString("<td>" + num1(s.FailedByClass[c]) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString(`</table></div><p class="note">Mean pods per run. Capacity: the pod fits an empty node but found no room (or waited until deleted, or its gang did not fit together): more nodes, or a better packing, would place it. Size: larger than every node it may use, even empty, in GPUs, CPU or memory (the simulator does not say which). Selector: its GPU model constraints name no model of the nodes, or its nodeName, nodeSelector or required node affinity no node it fits. Taint: a taint it does not tolerate (NoSchedule, NoExecute), or a cordon, keeps it off every node it fits and selects. Resource kind: it asks for GPUs and no node has any. Quota: its team's quota never admitted it.</p>`)
	return b.String()
}
