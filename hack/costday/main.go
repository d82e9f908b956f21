// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command costday writes examples/cost/day.om: a scripted day of the node
// agent's series (docs/metrics.md) as OpenMetrics with timestamps, the
// format `promtool tsdb create-blocks-from openmetrics` backfills, for
// `gpuplane cost --openmetrics` and its tests (docs/cost.md gives the
// day and its figures worked out by hand).
//
//	go run ./hack/costday > examples/cost/day.om
//
// The day is 2026-11-01 (UTC), sampled every 30 minutes (a coarse scrape
// interval keeps the file under 200 KB):
//
//   - node-a, two H100s: GPU-a0 held whole by ml/train-1 (job llm) from 0 h
//     to 8 h at 90 % and ml/train-2 (job llm) from 8 h to 20 h at 60 %, idle
//     after; GPU-a1 by web/infer-1 from 0 h to 18 h at 30 %, then unhealthy
//     (gpuplane_device_health 0) and no longer sampled.
//   - node-b, an H100 in MIG mode: its 3g.40gb instance held by ml/mig-a
//     from 6 h to 18 h (engine 50 %), its 1g.10gb by web/mig-b all day
//     (engine 25 %).
//   - node-c, an L4 time-sliced 4 ways (utilisation 40 %): web/ts-1 one
//     replica from 0 h to 12 h, ml/ts-2 two from 6 h to 24 h, and one
//     replica from 12 h to 14 h on a series without pod labels.
//   - node-d, a T4, idle all day.
//   - node-e, a GPU model outside the catalog ("NVIDIA RTX PRO 6000
//     Blackwell"): no price; held by ml/blackwell-1 all day.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuplane/gpuplane/api/metrics"
)

// Day is the day written, and Interval the time between samples.
var (
	Day      = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	Interval = 30 * time.Minute
)

// seg is a value from hour From to hour To.
type seg struct {
	from, to float64
	v        float64
}

type series struct {
	metric string
	labels map[string]string
	segs   []seg
}

func gpuLabels(host, uuid, product string, index int) map[string]string {
	return map[string]string{metrics.LabelHostname: host, metrics.LabelUUID: uuid, metrics.LabelModelName: product, metrics.LabelGPU: strconv.Itoa(index), metrics.LabelDevice: "nvidia" + strconv.Itoa(index)}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func pod(ns, name string) []string {
	return []string{metrics.LabelNamespace, ns, metrics.LabelPod, name, metrics.LabelContainer, "main"}
}

// Script returns the day's series.
func Script() []series {
	const h100, l4, t4, rtx = "NVIDIA H100 80GB HBM3", "NVIDIA L4", "Tesla T4", "NVIDIA RTX PRO 6000 Blackwell"
	a0 := gpuLabels("node-a", "GPU-a0", h100, 0)
	a1 := gpuLabels("node-a", "GPU-a1", h100, 1)
	b0 := gpuLabels("node-b", "GPU-b0", h100, 0)
	b3g := with(b0, metrics.LabelGPUInstanceProfile, "3g.40gb", metrics.LabelGPUInstanceID, "1")
	b1g := with(b0, metrics.LabelGPUInstanceProfile, "1g.10gb", metrics.LabelGPUInstanceID, "9")
	c0 := gpuLabels("node-c", "GPU-c0", l4, 0)
	d0 := gpuLabels("node-d", "GPU-d0", t4, 0)
	e0 := gpuLabels("node-e", "GPU-e0", rtx, 0)
	train1 := append(pod("ml", "train-1"), "label_job_name", "llm")
	train2 := append(pod("ml", "train-2"), "label_job_name", "llm")
	all := []seg{{0, 24, 1}}
	const (
		health = metrics.DeviceHealth
		share  = metrics.DeviceAllocationShare
		util   = metrics.DCGMDevGPUUtil
		engine = metrics.DCGMProfGrEngineActive
		fb     = metrics.DCGMDevFBUsed
	)
	return []series{
		{health, a0, all},
		{health, a1, []seg{{0, 18, 1}, {18, 24, 0}}},
		{health, b0, all},
		{health, b3g, all},
		{health, b1g, all},
		{health, c0, all},
		{health, d0, all},
		{health, e0, all},

		{share, with(a0, train1...), []seg{{0, 8, 1}}},
		{share, with(a0, train2...), []seg{{8, 20, 1}}},
		{share, with(a1, pod("web", "infer-1")...), []seg{{0, 18, 1}}},
		{share, with(b3g, pod("ml", "mig-a")...), []seg{{6, 18, 1}}},
		{share, with(b1g, pod("web", "mig-b")...), all},
		{share, with(c0, pod("web", "ts-1")...), []seg{{0, 12, 0.25}}},
		{share, with(c0, pod("ml", "ts-2")...), []seg{{6, 24, 0.5}}},
		{share, c0, []seg{{12, 14, 0.25}}}, // no pod labels: unattributed
		{share, with(e0, pod("ml", "blackwell-1")...), all},

		// A device held by one container is served with its labels; else
		// without (docs/metrics.md, Pod attribution).
		{util, with(a0, train1...), []seg{{0, 8, 90}}},
		{util, with(a0, train2...), []seg{{8, 20, 60}}},
		{util, a0, []seg{{20, 24, 0}}},
		{util, with(a1, pod("web", "infer-1")...), []seg{{0, 18, 30}}},
		{util, c0, []seg{{0, 24, 40}}},
		{util, d0, []seg{{0, 24, 0}}},
		{util, with(e0, pod("ml", "blackwell-1")...), []seg{{0, 24, 50}}},
		{engine, b3g, []seg{{0, 6, 0}, {18, 24, 0}}},
		{engine, with(b3g, pod("ml", "mig-a")...), []seg{{6, 18, 0.5}}},
		{engine, with(b1g, pod("web", "mig-b")...), []seg{{0, 24, 0.25}}},

		{fb, with(a0, train1...), []seg{{0, 8, 61440}}},
		{fb, with(a1, pod("web", "infer-1")...), []seg{{0, 18, 9216}}},
		{fb, with(b3g, pod("ml", "mig-a")...), []seg{{6, 18, 20480}}},
	}
}

// Write writes the series as OpenMetrics, each metric family together,
// ending with "# EOF".
func Write(w *bufio.Writer, ss []series) error {
	help := map[string]string{
		metrics.DeviceHealth:           "Whether the device is healthy (1) or not (0).",
		metrics.DeviceAllocationShare:  "Fraction of the device (GPU or MIG device) the container holds.",
		metrics.DCGMDevGPUUtil:         "GPU utilization (in %).",
		metrics.DCGMProfGrEngineActive: "Ratio of time the graphics engine is active.",
		metrics.DCGMDevFBUsed:          "Frame buffer memory used (in MiB).",
	}
	var order []string
	by := map[string][]series{}
	for _, s := range ss {
		if by[s.metric] == nil {
			order = append(order, s.metric)
		}
		by[s.metric] = append(by[s.metric], s)
	}
	for _, m := range order {
		fmt.Fprintf(w, "# TYPE %s gauge\n# HELP %s %s\n", m, m, help[m])
		for _, s := range by[m] {
			keys := make([]string, 0, len(s.labels))
			for k := range s.labels {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var b strings.Builder
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, "%s=%q", k, s.labels[k])
			}
			for _, g := range s.segs {
				for t := Day.Add(time.Duration(g.from * float64(time.Hour))); t.Before(Day.Add(time.Duration(g.to * float64(time.Hour)))); t = t.Add(Interval) {
					fmt.Fprintf(w, "%s{%s} %s %d\n", m, b.String(), strconv.FormatFloat(g.v, 'g', -1, 64), t.Unix())
				}
			}
		}
	}
	fmt.Fprintln(w, "# EOF")
	return w.Flush()
}

func main() {
	if err := Write(bufio.NewWriter(os.Stdout), Script()); err != nil {
		fmt.Fprintln(os.Stderr, "costday:", err)
		os.Exit(1)
	}
}
