// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/sim/sizing"
)

// vendorHead is the header of the comparison across vendors: per hour of
// running in fill, over the trace's span in replay.
func vendorHead(vc *sizing.VendorComparison) []string {
	gpuh, usdh := "GPU-h/h served", "USD/h"
	if vc.Replay {
		gpuh, usdh = "GPU-h served", "USD"
	}
	return []string{"policy", "sharing", "node type", "vendor", "add", "pods placed", gpuh, usdh, "USD per served GPU-h", "cannot serve (placed)"}
}

// vendorRow is one candidate's cells, in vendorHead's order; "add" is
// "not reached (N tried)" for a search that did not reach the target.
func vendorRow(c sizing.VendorCandidate) []string {
	sh := c.Sharing
	if sh == "" {
		sh = "fractional"
	}
	add := thousands(c.Added)
	if !c.Reached {
		add = "not reached (best at " + add + ")"
	}
	return []string{c.Policy, sh, c.NodeType, c.Vendor, add, podCount(c.Placed), num1(c.GPUHours), usd(c.USD), usd(c.USDPerServedGPUHour),
		fmt.Sprintf("%s (%s)", thousands(c.CannotServe), podCount(c.CannotServePlaced))}
}

// vendorNote says what the comparison counts and what it cannot.
const vendorNote = `  pods placed, GPU-hours served and USD on the same workload, at each answer (not reached:
  at its best: the fewest nodes placing, within one pod, the most pods it can serve);
  a GPU-hour counts the same on every vendor (capacity and price, not speed or software);
  cannot serve: pods that accept no vendor of the node type (their vendors, or a vendor's
  resource), and of them those placed on the cluster as given`

// writeVendors writes the comparison across vendors of a --size search.
func writeVendors(w io.Writer, vc *sizing.VendorComparison) error {
	if vc == nil {
		return nil
	}
	var groups []string
	for _, g := range vc.Groups {
		v := g.Vendors
		if g.Accepts == cluster.AllVendors {
			v = "any vendor"
		}
		groups = append(groups, fmt.Sprintf("%s accept %s", count(g.Pods, "pod"), v))
	}
	fmt.Fprintf(w, "\nacross vendors (%s):\n", strings.Join(groups, ", "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(vendorHead(vc), "\t")+"\t")
	for _, c := range vc.Candidates {
		fmt.Fprintln(tw, strings.Join(vendorRow(c), "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, vendorNote)
	for _, l := range vc.NotComparable {
		fmt.Fprintln(w, "not comparable: "+l)
	}
	return nil
}

// vendorsHTML is the comparison across vendors as a section of the page.
func vendorsHTML(vc *sizing.VendorComparison) string {
	if vc == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString(`<h2>Across vendors</h2><div class="wrap"><table id="vendors"><tr>`)
	for _, h := range vendorHead(vc) {
		b.WriteString("<th>" + html.EscapeString(h) + "</th>")
	}
	b.WriteString("</tr>")
	for _, c := range vc.Candidates {
		b.WriteString("<tr>")
		for _, x := range vendorRow(c) {
			b.WriteString("<td>" + html.EscapeString(x) + "</td>")
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table></div><p>" + html.EscapeString(strings.Join(strings.Fields(vendorNote), " ")) + "</p>")
	for _, l := range vc.NotComparable {
		b.WriteString("<p>Not comparable: " + html.EscapeString(l) + "</p>")
	}
	return b.String()
}
