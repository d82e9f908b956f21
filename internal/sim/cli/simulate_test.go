// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

func TestCheck(t *testing.T) {
	if _, _, err := DefaultOptions().check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"pods without nodes", func(o *Options) { o.PodsFile = "p.csv" }, "--pods needs --nodes (--nodes alone runs the built-in pods on them)"},
		{"format", func(o *Options) { o.Format = "xml" }, `unknown --format "xml"`},
		{"policy", func(o *Options) { o.Policies = "fgd,magic" }, `unknown policy "magic"`},
		{"seeds", func(o *Options) { o.Seeds = 10001 }, "--seeds 10001 out of range 1..10000"},
		{"seed overflow", func(o *Options) { o.Seed = 1<<64 - 2 }, "overflows"},
		{"inflate", func(o *Options) { o.Inflate = 0 }, "--inflate 0 out of range (0, 100]"},
		{"parallel", func(o *Options) { o.Parallel = 4097 }, "--parallel 4097 out of range"},
		{"popularity", func(o *Options) { o.Popularity = 1.5 }, "--popularity 1.5 out of range (0, 1]"},
		{"tie-break", func(o *Options) { o.TieBreak = "coin" }, "coin"},
		{"gpu-api", func(o *Options) { o.GPUAPI = "csi" }, `--gpu-api: unknown GPU API "csi" (device-plugin or dra)`},
		{"dra-mig-order", func(o *Options) { o.GPUAPI, o.DRAMIGOrder = "dra", "best" }, `--dra-mig-order: unknown DRA MIG order "best" (table, core or stale)`},
		{"dra-mig-order without dra", func(o *Options) { o.DRAMIGOrder = "core" }, "--dra-mig-order applies to --gpu-api dra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.edit(&o)
			if _, _, err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRunWarnsAboutPrices(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	o := DefaultOptions()
	o.Seeds = 1
	o.Policies = "bestfit"
	o.NodesFile = write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,16000,65536,2,X9\nn1,16000,65536,2,T4\n")
	o.PodsFile = write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\np,1000,1024,1,1000,\n")
	o.PricesFile = write("prices.txt", "T4 0.5\nV100X 1\n")
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	want := `simulate: warning: no price for GPU model "X9"; its GPUs cost 0 (give one with --prices)
simulate: warning: ` + o.PricesFile + ` prices GPU model "V100X", which neither the catalog nor the cluster has
`
	if stderr.String() != want {
		t.Errorf("stderr\n%s\nwant\n%s", stderr.String(), want)
	}
	if !strings.Contains(stdout.String(), "bestfit") {
		t.Errorf("no table on stdout:\n%s", stdout.String())
	}
}

// TestRunReportInputs: with --out, report.json carries the pod list's
// SHA-256 and the first seed's per-node picture (one T4 node of 2 GPUs
// whose 2 whole-GPU pods fill it: 1000 per mille), and no other seed's.
func TestRunReportInputs(t *testing.T) {
	dir := t.TempDir()
	pods := "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,1,1000\nb,1000,1024,1,1000\n"
	o := DefaultOptions()
	o.Seeds, o.Policies, o.Inflate, o.OutDir = 2, "bestfit", 1, filepath.Join(dir, "out")
	o.NodesFile, o.PodsFile = filepath.Join(dir, "nodes.csv"), filepath.Join(dir, "pods.csv")
	if err := os.WriteFile(o.NodesFile, []byte("sn,cpu_milli,memory_mib,gpu,model\nn,8000,8192,2,T4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.PodsFile, []byte(pods), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(o.OutDir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x", sha256.Sum256([]byte(pods))); rep.PodsSHA256() != want {
		t.Errorf("pods_sha256 %q, want %q", rep.PodsSHA256(), want)
	}
	for _, r := range rep.Results {
		got := r.ByModel[0].NodeAllocation
		if first := r.Seed == o.Seed; first != (len(got) == 1 && got[0] == 1000) || (!first && got != nil) {
			t.Errorf("seed %d: node allocation %v", r.Seed, got)
		}
	}
}

// TestCaseInsensitive: --format JSON and --mode Fill are taken as --sharing
// MIG is; a catalog model in any case is the model; a near miss gets a
// "did you mean".
func TestCaseInsensitive(t *testing.T) {
	dir := t.TempDir()
	o := DefaultOptions()
	o.NodesFile, o.PodsFile = "a100-80gb x 1", filepath.Join(dir, "pods.csv")
	os.WriteFile(o.PodsFile, []byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1024,8,1000\n"), 0o644)
	o.Format, o.Mode, o.Policies, o.Seeds, o.TieBreak = "JSON", "Fill", "ALL", 1, "First"
	var stdout, stderr strings.Builder
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	// One DGX A100 (8 GPUs, the model's typical server), the pod takes all 8.
	if rep.GPUs != 8 || rep.Recommendation == nil || rep.Recommendation.Cluster[0].Model != "A100-80GB" {
		t.Errorf("GPUs %d, recommendation %+v", rep.GPUs, rep.Recommendation)
	}
	o.NodesFile, o.Format = "H100 x 3", "table"
	err := Run(context.Background(), o, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `model "H100" is not in the GPU catalog`) || !strings.HasSuffix(err.Error(), `did you mean "H100-80GB" or "H100-NVL"?`) {
		t.Errorf("H100 x 3: %v", err)
	}
	yaml := filepath.Join(dir, "c.yaml")
	os.WriteFile(yaml, []byte("nodeGroups:\n  - count: 2\n    model: a100-80GB\n"), 0o644)
	o.NodesFile = yaml
	stdout.Reset()
	if err := Run(context.Background(), o, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "2 A100-80GB nodes (16 GPUs)") {
		t.Errorf("cluster YAML a100-80GB: %v\n%s", err, stdout.String())
	}
}

// TestDRAOrderDefault: under --gpu-api dra the MIG order defaults to the
// core's, which gpuplane's driver publishes (the chart's default); an
// explicit table order stays; without DRA there is none.
func TestDRAOrderDefault(t *testing.T) {
	for _, tc := range []struct{ api, flag, want string }{
		{"dra", "", "core"},
		{"dra", "table", "table"},
		{"dra", "core", "core"},
		{"dra", "stale", "stale"},
		{"device-plugin", "", "table"},
	} {
		o := DefaultOptions()
		o.GPUAPI, o.DRAMIGOrder = tc.api, tc.flag
		if _, _, err := o.check(); err != nil {
			t.Fatalf("%s %q: %v", tc.api, tc.flag, err)
		}
		if got := o.draOrder().String(); got != tc.want {
			t.Errorf("--gpu-api %s --dra-mig-order %q: order %s, want %s", tc.api, tc.flag, got, tc.want)
		}
	}
	o := DefaultOptions()
	o.DRAMIGOrder = "table"
	if _, _, err := o.check(); err == nil || err.Error() != "--dra-mig-order applies to --gpu-api dra" {
		t.Errorf("--dra-mig-order table without dra: %v", err)
	}
}
