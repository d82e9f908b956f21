// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/placement"
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

// BenchmarkCycleCandidates is BenchmarkFilterScore's cycle as the shipped
// profile runs it: PreFilter syncs the node index and names the placement
// core's 16 best nodes (Args.Candidates), then Filter and Score run on
// those alone, then NormalizeScore, over the same 5,000 nodes. Before each
// cycle one node changes (a pod added or removed in turn: a new NodeInfo
// generation), as the last binding changes one node between two cycles.
func BenchmarkCycleCandidates(b *testing.B) {
	for _, policy := range []string{"fgd", "bestfit", "leastallocated", "fgdcm"} {
		b.Run(policy, func(b *testing.B) {
			pl := newTestPlugin(b, policy, "first")
			pl.candidates = int(DefaultCandidates)
			pl.index = newNodeIndex(placement.NewIndexedPlacer(pl.policy, pl.tie, rand.New(rand.NewPCG(0, 1))))
			pl.nodes.track = true
			nodes := make([]fwk.NodeInfo, 5000)
			byName := map[string]fwk.NodeInfo{}
			for i := range nodes {
				n := gpuNode(fmt.Sprintf("node-%04d", i), "V100M16", 8, "96", "512Gi")
				if i%4 == 0 {
					nodes[i] = nodeInfo(n,
						newPod(fmt.Sprintf("a%d", i), "4", "16Gi", withMilli(500), onNode(n.Name), withAnnotation(gpuresource.AnnotationGPUs, "0")),
						newPod(fmt.Sprintf("b%d", i), "8", "32Gi", withGPUs(2), onNode(n.Name), withAnnotation(gpuresource.AnnotationGPUs, "1,2")))
				} else {
					nodes[i] = nodeInfo(n)
				}
				byName[n.Name] = nodes[i]
			}
			pod := newPod("p", "4", "15Gi", withMilli(300))
			ctx := context.Background()
			cycle := func() {
				cs := framework.NewCycleState()
				r, st := pl.PreFilter(ctx, cs, pod, nodes)
				if !st.IsSuccess() || r.AllNodes() {
					b.Fatalf("PreFilter: %v, %v", r, st)
				}
				scores := make(fwk.NodeScoreList, 0, r.NodeNames.Len())
				for name := range r.NodeNames {
					ni := byName[name]
					if st := pl.Filter(ctx, cs, pod, ni); !st.IsSuccess() {
						b.Fatal(st)
					}
					s, st := pl.Score(ctx, cs, pod, ni)
					if !st.IsSuccess() {
						b.Fatal(st)
					}
					scores = append(scores, fwk.NodeScore{Name: name, Score: s})
				}
				if st := pl.NormalizeScore(ctx, cs, pod, scores); !st.IsSuccess() {
					b.Fatal(st)
				}
			}
			cycle() // the index built once, as after the scheduler's first cycle
			extra := newPod("x", "1", "1Gi", withMilli(100), onNode("node-0001"), withAnnotation(gpuresource.AnnotationGPUs, "5"))
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ni := nodes[1].(*framework.NodeInfo)
				if i%2 == 0 {
					ni.AddPod(extra)
				} else if err := ni.RemovePod(klog.Background(), extra); err != nil {
					b.Fatal(err)
				}
				cycle()
			}
		})
	}
}
