// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// snapshotPodsTable shows, for simulate --snapshot, where each pod went
// under each policy (Report.SnapshotPods).
func snapshotPodsTable(r *engine.Report) string {
	if len(r.SnapshotPods) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Pods of the snapshot</h2><p class="note">Where each pod went: the first seed's node and GPUs, or why it failed; in how many runs it placed.</p><div class="wrap"><table id="snapshot-pods"><tr><th>pod</th><th>policy</th><th>node</th><th>GPUs</th><th>placed</th></tr>`)
	const maxRows = 300
	for i, p := range r.SnapshotPods {
		if i == maxRows {
			fmt.Fprintf(&b, `<tr><td colspan="5">… %s more rows in report.json (snapshot_pods)</td></tr>`, thousands(len(r.SnapshotPods)-maxRows))
			break
		}
		where := p.Node
		if where == "" {
			where = "– (" + p.Reason + ")"
		}
		gpus := make([]string, len(p.GPUs))
		for i, g := range p.GPUs {
			gpus[i] = strconv.Itoa(g)
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%d/%d</td></tr>", html.EscapeString(p.Pod), html.EscapeString(p.Policy), html.EscapeString(where), strings.Join(gpus, ","), p.Placed, p.Runs)
	}
	b.WriteString("</table></div>")
	return b.String()
}
