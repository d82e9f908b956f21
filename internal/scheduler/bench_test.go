// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
)

// BenchmarkFilterScore runs the plugin's PreFilter, then Filter and Score
// on every node, then NormalizeScore, for one GPU-sharing pod over 5,000
// nodes of 8 V100 GPUs, a quarter of them partly used: one scheduling
// cycle's work for this plugin, from a scheduler snapshot.
//
// Two cases: "cold" rebuilds every node's state (the first cycle after a
// restart), "warm" finds them cached (the usual cycle, where only the node
// of the last binding changed).
func BenchmarkFilterScore(b *testing.B) {
	for _, policy := range []string{"fgd", "bestfit", "leastallocated", "fgdcm"} {
		for _, warm := range []bool{false, true} {
			name := policy + "/cold"
			if warm {
				name = policy + "/warm"
			}
			b.Run(name, func(b *testing.B) {
				pl := newTestPlugin(b, policy, "first")
				nodes := make([]fwk.NodeInfo, 5000)
				for i := range nodes {
					n := gpuNode(fmt.Sprintf("node-%04d", i), "V100M16", 8, "96", "512Gi")
					if i%4 == 0 {
						nodes[i] = nodeInfo(n,
							newPod(fmt.Sprintf("a%d", i), "4", "16Gi", withMilli(500), onNode(n.Name), withAnnotation(gpuresource.AnnotationGPUs, "0")),
							newPod(fmt.Sprintf("b%d", i), "8", "32Gi", withGPUs(2), onNode(n.Name), withAnnotation(gpuresource.AnnotationGPUs, "1,2")))
					} else {
						nodes[i] = nodeInfo(n)
					}
				}
				pod := newPod("p", "4", "15Gi", withMilli(300))
				ctx := context.Background()
				scores := make(fwk.NodeScoreList, len(nodes))
				if warm {
					cs := framework.NewCycleState()
					pl.PreFilter(ctx, cs, pod, nodes)
					for _, ni := range nodes {
						pl.Filter(ctx, cs, pod, ni)
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if !warm {
						pl.nodes = newNodeCache()
					}
					cs := framework.NewCycleState()
					if _, st := pl.PreFilter(ctx, cs, pod, nodes); !st.IsSuccess() {
						b.Fatal(st)
					}
					for i, ni := range nodes {
						if st := pl.Filter(ctx, cs, pod, ni); !st.IsSuccess() {
							b.Fatal(st)
						}
						s, st := pl.Score(ctx, cs, pod, ni)
						if !st.IsSuccess() {
							b.Fatal(st)
						}
						scores[i] = fwk.NodeScore{Name: ni.Node().Name, Score: s}
					}
					if st := pl.NormalizeScore(ctx, cs, pod, scores); !st.IsSuccess() {
						b.Fatal(st)
					}
				}
			})
		}
	}
}
