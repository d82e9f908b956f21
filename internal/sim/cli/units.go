// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"fmt"

	"github.com/gpuplane/gpuplane/internal/trace"
)

// Bounds of plausible units: a node below 1 GiB of memory or 1 core, or
// above 4,096 cores, is most likely a value in the wrong unit (GiB given
// as MiB, cores as millicores, millicores as cores). The largest servers
// sold have under 2,000 hardware threads.
const (
	minNodeMemoryMiB = 1024
	minNodeCPUMilli  = 1000
	maxNodeCPUMilli  = 4096 * 1000
)

// unitWarnings returns warnings on implausible units in the node and pod
// lists, each naming how many and the first: nodes of under 1 GiB, under
// 1 core or over 4,096 cores, and pods asking more memory than any node
// has.
func unitWarnings(nName string, nodes []trace.NodeSpec, pName string, pods []trace.PodSpec) []string {
	var out []string
	type rule struct {
		bad  func(trace.NodeSpec) bool
		what func(trace.NodeSpec) string
		hint string
	}
	rules := []rule{
		{func(n trace.NodeSpec) bool { return n.MemoryMiB < minNodeMemoryMiB },
			func(n trace.NodeSpec) string { return fmt.Sprintf("%d MiB of memory", n.MemoryMiB) },
			"memory is in MiB (memory_mib; memoryGiB in cluster YAML): was GiB given as MiB?"},
		{func(n trace.NodeSpec) bool { return n.CPUMilli < minNodeCPUMilli },
			func(n trace.NodeSpec) string {
				return fmt.Sprintf("%g cores (cpu_milli %d)", float64(n.CPUMilli)/1000, n.CPUMilli)
			},
			"cpu_milli is in millicores: were cores given as millicores?"},
		{func(n trace.NodeSpec) bool { return n.CPUMilli > maxNodeCPUMilli },
			func(n trace.NodeSpec) string { return fmt.Sprintf("%s cores", commas(n.CPUMilli/1000)) },
			"no server has over 4,096 cores: were millicores given as cores (cpu in cluster YAML is cores)?"},
	}
	for _, r := range rules {
		n, first := 0, -1
		for i, s := range nodes {
			if r.bad(s) {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		if n > 0 {
			f := nodes[first]
			out = append(out, fmt.Sprintf("%s: %d of %d nodes have %s or the like (first %q%s); %s", nName, n, len(nodes), r.what(f), f.Name, lineOf(f.Line), r.hint))
		}
	}
	var maxMem int64
	for _, s := range nodes {
		maxMem = max(maxMem, s.MemoryMiB)
	}
	n, first := 0, -1
	for i, p := range pods {
		if len(nodes) > 0 && p.MemoryMiB > maxMem {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n > 0 {
		p := pods[first]
		hint := "they fit no node (too_large)"
		if p.MemoryMiB >= 100*maxMem {
			hint = "memory_mib is MiB in both lists: is one in another unit?" // GiB against MiB is 1,024 times
		}
		out = append(out, fmt.Sprintf("%s: %d of %d pods ask more memory than any node of %s has (%s MiB): first %q%s asks %s MiB; %s",
			pName, n, len(pods), nName, commas(maxMem), p.Name, lineOf(int(p.Line)), commas(p.MemoryMiB), hint))
	}
	return out
}

// lineOf is ", line N", or "" for no line.
func lineOf(line int) string {
	if line <= 0 {
		return ""
	}
	return fmt.Sprintf(", line %d", line)
}

// commas writes n with thousands separators.
func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}
