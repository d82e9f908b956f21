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

// maxGridPods is how many pods the HTML grid shows; report.json's
// snapshot_pods holds them all.
const maxGridPods = 300

// snapshotPodsTable shows, for simulate --snapshot, where each pod went
// under each policy (Report.SnapshotPods) as a grid: one row per pod, in
// the order the report lists them, one column per policy.
func snapshotPodsTable(r *engine.Report) string {
	if len(r.SnapshotPods) == 0 {
		return ""
	}
	pods, policies, cell := podGrid(r.SnapshotPods)
	var b strings.Builder
	b.WriteString(`<h2>Pods of the snapshot</h2><p class="note">Where each pod went under each policy: the first seed's node and GPUs, or why it failed; in how many runs it placed.</p><div class="wrap"><table id="snapshot-pods"><tr><th>pod</th>`)
	for _, p := range policies {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(p))
	}
	b.WriteString("</tr>")
	for i, pod := range pods {
		if i == maxGridPods {
			fmt.Fprintf(&b, `<tr><td colspan="%d">… %s more pods in report.json (snapshot_pods)</td></tr>`, len(policies)+1, thousands(len(pods)-maxGridPods))
			break
		}
		fmt.Fprintf(&b, "<tr><td>%s</td>", html.EscapeString(pod))
		for _, pol := range policies {
			o, ok := cell[[2]string{pod, pol}]
			if !ok {
				b.WriteString("<td></td>")
				continue
			}
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(outcomeText(o)))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table></div>")
	return b.String()
}

// podGrid returns the pods and the policies of outcomes, each once in the
// order first seen, and each outcome by pod and policy.
func podGrid(outcomes []engine.PodOutcome) (pods, policies []string, cell map[[2]string]engine.PodOutcome) {
	cell = map[[2]string]engine.PodOutcome{}
	seenPod, seenPolicy := map[string]bool{}, map[string]bool{}
	for _, o := range outcomes {
		if !seenPod[o.Pod] {
			seenPod[o.Pod] = true
			pods = append(pods, o.Pod)
		}
		if !seenPolicy[o.Policy] {
			seenPolicy[o.Policy] = true
			policies = append(policies, o.Policy)
		}
		cell[[2]string{o.Pod, o.Policy}] = o
	}
	return pods, policies, cell
}

// outcomeText is one grid cell: "node GPUs 0,1 (3/3)", or "– reason (0/3)".
func outcomeText(o engine.PodOutcome) string {
	where := o.Node
	if where == "" {
		where = "– " + o.Reason
	}
	if len(o.GPUs) > 0 {
		gpus := make([]string, len(o.GPUs))
		for i, g := range o.GPUs {
			gpus[i] = strconv.Itoa(g)
		}
		where += " GPUs " + strings.Join(gpus, ",")
	}
	return fmt.Sprintf("%s (%d/%d)", where, o.Placed, o.Runs)
}
