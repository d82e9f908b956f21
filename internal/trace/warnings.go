// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"fmt"
	"slices"
	"strings"
)

// KnownQoS and KnownPhases are the qos and pod_phase values of the public
// openb pod lists (github.com/alibaba/clusterdata, cluster-trace-gpu-v2023:
// every openb_pod_list_*.csv). The simulator does not use either column;
// another value is kept and warned about, since it suggests a column mix-up.
var (
	KnownQoS    = []string{"LS", "BE", "Burstable", "Guaranteed"}
	KnownPhases = []string{"Running", "Pending", "Succeeded", "Failed"}
)

// maxUnknownListed is how many unknown values of a column Warnings names.
const maxUnknownListed = 5

// Warnings returns what the readers accepted but a user should know:
// nodes with 0 GPUs and a GPU model (ignored), and qos or pod_phase values
// outside KnownQoS and KnownPhases, each value once with its pod count and
// first line. nodesFile and podsFile name the inputs.
func Warnings(nodesFile string, nodes []NodeSpec, podsFile string, pods []PodSpec) []string {
	var out []string
	ignored, first := 0, -1
	for i, n := range nodes {
		if n.IgnoredModel != "" {
			if ignored == 0 {
				first = i
			}
			ignored++
		}
	}
	if ignored > 0 {
		n := nodes[first]
		out = append(out, fmt.Sprintf("%s:%d: node %s has 0 GPUs and GPU model %s, which is ignored (%d such nodes)",
			nodesFile, n.Line, Quote(n.Name), Quote(n.IgnoredModel), ignored))
	}
	for _, c := range []struct {
		column string
		known  []string
		value  func(*PodSpec) string
	}{
		{"qos", KnownQoS, func(p *PodSpec) string { return p.QoS }},
		{"pod_phase", KnownPhases, func(p *PodSpec) string { return p.Phase }},
	} {
		type seen struct{ pods, line int }
		unknown := map[string]*seen{}
		var order []string
		for i := range pods {
			v := c.value(&pods[i])
			if v == "" || slices.Contains(c.known, v) {
				continue
			}
			if unknown[v] == nil {
				unknown[v] = &seen{line: int(pods[i].Line)}
				order = append(order, v)
			}
			unknown[v].pods++
		}
		for k, v := range order {
			if k == maxUnknownListed {
				out = append(out, fmt.Sprintf("%s: column %s: %d more unknown values", podsFile, c.column, len(order)-k))
				break
			}
			out = append(out, fmt.Sprintf("%s:%d: column %s: unknown value %s in %d pods (the openb lists use %s); it is kept, and the simulator does not use it",
				podsFile, unknown[v].line, c.column, Quote(v), unknown[v].pods, strings.Join(c.known, ", ")))
		}
	}
	return out
}
