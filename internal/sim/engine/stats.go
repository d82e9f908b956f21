// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"math"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// PlacedPods returns the pods run r placed and the pods that arrived:
// fill, the placements of its arrived pods; replay, the starts and the
// pods that arrived.
func PlacedPods(r Result) (placed, arrived int) {
	if r.Replay != nil {
		return r.Replay.Started, r.Pods
	}
	return r.Pods - r.FailedPods, r.Pods
}

// ServedRatio is the GPU demand run r served over the demand that arrived
// (0..1; 0 when none arrived).
func ServedRatio(r Result) float64 {
	if r.ArrivedGPUMilli <= 0 {
		return 0
	}
	return float64(r.ServedGPUMilli) / float64(r.ArrivedGPUMilli)
}

func summarise(policies []string, results []Result) []Summary {
	var out []Summary
	for _, p := range policies {
		s := Summary{Policy: p}
		var allocs, served []float64
		for _, r := range results {
			if r.Policy != p {
				continue
			}
			s.Runs++
			allocs = append(allocs, r.GPUAllocationRatio)
			served = append(served, ServedRatio(r))
			placed, arrived := PlacedPods(r)
			s.PlacedPodsMean += float64(placed)
			s.ArrivedPodsMean += float64(arrived)
			s.ServedGPUsMean += float64(r.ServedGPUMilli) / cluster.MilliGPU
			s.PaddingGPUsMean += float64(r.PaddingGPUMilli) / cluster.MilliGPU
			for _, g := range r.Failed {
				if c := FailureClass(g.Reason); c != "" {
					if s.FailedByClass == nil {
						s.FailedByClass = map[string]float64{}
					}
					s.FailedByClass[c] += float64(g.Pods)
				}
			}
			s.FragmentationRatioMean += r.FragmentationRatio
			s.FailedPodsMean += float64(r.FailedPods)
			s.UnallocatedGPUsMean += r.UnallocatedGPUs
			s.IdleUSDPerHourMean += r.IdleUSDPerHour
			if r.Replay != nil {
				s.QueueDelayMeanSeconds += r.Replay.QueueDelayMeanSeconds
				s.QueueDelayP95Seconds += r.Replay.QueueDelayP95Seconds
				s.TimeWeightedAllocMean += r.Replay.TimeWeightedAllocationRatio
			}
		}
		if s.Runs == 0 {
			continue
		}
		n := float64(s.Runs)
		s.GPUAllocationRatioMean, s.GPUAllocationRatioStd = meanStd(allocs)
		s.ServedRatioMean, s.ServedRatioStd = meanStd(served)
		s.PlacedPodsMean /= n
		s.ArrivedPodsMean /= n
		s.ServedGPUsMean /= n
		s.PaddingGPUsMean /= n
		for c := range s.FailedByClass {
			s.FailedByClass[c] /= n
		}
		s.FragmentationRatioMean /= n
		s.FailedPodsMean /= n
		s.UnallocatedGPUsMean /= n
		s.IdleUSDPerHourMean /= n
		s.QueueDelayMeanSeconds /= n
		s.QueueDelayP95Seconds /= n
		s.TimeWeightedAllocMean /= n
		out = append(out, s)
	}
	return out
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return m, math.Sqrt(v / float64(len(xs)))
}

// percentile returns the q-quantile (0..1) of sorted xs by the
// nearest-rank method.
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	k = max(0, min(k, len(sorted)-1))
	return sorted[k]
}
