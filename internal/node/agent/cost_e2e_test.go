// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuplane/gpuplane/internal/cost/cli"
)

// TestCostFromScrapedAgent runs the node agent on the mock profile with
// GPU 0 time-sliced 4 ways, lets a real Prometheus scrape it every second
// for a few seconds, and runs gpuplane cost over that window by pod. Every
// pod's series arrive in the same scrapes, so every pod is held for the
// same steps, and the shares are exact ratios of whole-a's GPU-hours (GPU
// 2, whole): train-a and train-b one replica of 4 (1/4), infer-c two (2/4),
// mig-a a 3g.40gb instance of an A100 (3/7, NVIDIA's 7 compute slices).
// Rows and idle add up to the 4 GPUs' cost to the cent.
func TestCostFromScrapedAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gpuplane-node-agent binary and Prometheus")
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("version: v1\nflags: {migStrategy: mixed}\nsharing: {timeSlicing: {renameByDefault: true, resources: [{name: nvidia.com/gpu, replicas: 4}]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startMetricsAgent(t, "--config", cfg)
	a.setPods()
	ctx, cancel := context.WithTimeout(a.exited, 90*time.Second) // ends when the agent exits
	defer cancel()
	base := startPrometheus(t, ctx, strings.TrimSuffix(strings.TrimPrefix(a.url, "http://"), "/metrics"))
	from := time.Now().Truncate(time.Second)
	// Query until every pod's share has been scraped for 5 s.
	var rep cli.Report
	for {
		select {
		case <-ctx.Done():
			t.Fatalf("no 5 s of shares for the 5 pods: %+v", rep.Rows)
		case <-time.After(time.Second):
		}
		var out, errOut bytes.Buffer
		o := cli.Options{Prometheus: base, From: fmt.Sprint(from.Unix()), To: fmt.Sprint(time.Now().Unix()), Step: time.Second, By: "pod", Format: "json"}
		if err := cli.Run(ctx, o, &out, &errOut); err != nil {
			if strings.Contains(err.Error(), "no node agent data") {
				continue
			}
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if w := row(rep, "batch/whole-a"); len(rep.Rows) == 5 && w.GPUHoursAllocated >= 5.0/3600 {
			break
		}
	}
	whole := row(rep, "batch/whole-a").GPUHoursAllocated
	for pod, share := range map[string]float64{"ml/train-a": 0.25, "ml/train-b": 0.25, "web/infer-c": 0.5, "ml/mig-a": 3.0 / 7} {
		if got := row(rep, pod).GPUHoursAllocated; math.Abs(got-share*whole) > 1e-12 {
			t.Errorf("%s: %v GPU-h, want %v x whole-a's %v", pod, got, share, whole)
		}
	}
	if rep.GPUs != 4 || len(rep.Idle) != 2 {
		t.Errorf("%d GPUs, idle %+v; want 4 GPUs, idle on H100 and A100 rows", rep.GPUs, rep.Idle)
	}
	var sum int64
	for _, x := range rep.Rows {
		sum += usdCents(t, x.CostUSD)
	}
	for _, x := range rep.Idle {
		sum += usdCents(t, x.CostUSD)
	}
	if asset := usdCents(t, rep.AssetUSD); sum != asset || asset == 0 {
		t.Errorf("rows and idle %d c, asset %d c", sum, asset)
	}
}

func row(r cli.Report, key string) cli.Row {
	for _, x := range r.Rows {
		if x.Key == key {
			return x
		}
	}
	return cli.Row{}
}

func usdCents(t *testing.T, usd string) int64 {
	t.Helper()
	var d, c int64
	if _, err := fmt.Sscanf(usd, "%d.%02d", &d, &c); err != nil {
		t.Fatalf("USD %q: %v", usd, err)
	}
	return d*100 + c
}
