// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// sharePods is a small openb pod list of GPU shares and whole GPUs.
const sharePods = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec
s1,2000,8192,1,300,
s2,2000,8192,1,500,
s3,4000,16384,1,250,
w1,8000,32768,1,1000,
`

// simulateValues runs gpuplane simulate with o twice, -o json and
// -o values, and returns the report and the values file.
func simulateValues(t *testing.T, o cli.Options) (*engine.Report, string) {
	t.Helper()
	var js, values, stderr strings.Builder
	o.Format = "json"
	if err := cli.Run(context.Background(), o, &js, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep engine.Report
	if err := json.Unmarshal([]byte(js.String()), &rep); err != nil {
		t.Fatal(err)
	}
	o.Format = "values"
	if err := cli.Run(context.Background(), o, &values, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(values.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return &rep, p
}

// pluginArgs returns GPUPlacement's args in the chart's scheduler
// configuration.
func pluginArgs(t *testing.T, r rendered) map[string]any {
	t.Helper()
	conf := schedulerConfig(t, r)
	for _, p := range conf["profiles"].([]any) {
		for _, pc := range p.(map[string]any)["pluginConfig"].([]any) {
			if pc := pc.(map[string]any); pc["name"] == "GPUPlacement" {
				return pc["args"].(map[string]any)
			}
		}
	}
	t.Fatalf("no GPUPlacement args in %v", conf)
	return nil
}

// agentConfig returns the node agent's configuration in the chart's
// ConfigMap, parsed as the agent parses it.
func agentConfig(t *testing.T, r rendered) *configv1.Config {
	t.Helper()
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", fullname, &cm)
	c, err := configv1.ParseConfig("config.yaml", []byte(cm.Data["config.yaml"]))
	if err != nil {
		t.Fatalf("agent config: %v\n%s", err, cm.Data["config.yaml"])
	}
	return c
}

// migOptions are the options of a mig simulation on 3 A100-80GB nodes and
// a T4 node, policy fgdcm, tie-break first.
func migOptions(t *testing.T) cli.Options {
	o := cli.DefaultOptions()
	o.Seeds, o.Policies, o.Sharing, o.TieBreak = 1, "fgdcm", "mig", "first"
	o.NodesFile, o.PodsFile = "A100-80GB x 3, T4 x 1", filepath.Join(t.TempDir(), "pods.csv")
	if err := os.WriteFile(o.PodsFile, []byte(sharePods), 0o644); err != nil {
		t.Fatal(err)
	}
	return o
}

// timesliceOptions are the options of a time-slicing simulation (4
// replicas) of the built-in scenario, policy bestfit, simulate's default
// tie-break.
func timesliceOptions() cli.Options {
	o := cli.DefaultOptions()
	o.Seeds, o.Policies, o.Sharing = 1, "bestfit", "timeslice:4"
	return o
}

// TestSimulateValues: the values gpuplane simulate -o values writes
// render, with the chart, the scheduler configuration (GPUPlacement's
// policy and tie-break) and the node agent configuration that were
// simulated: time-slicing replicas, and MIG layouts as a mig-parted
// config with one configuration per node group.
func TestSimulateValues(t *testing.T) {
	helmBin(t)
	o := timesliceOptions()
	rep, values := simulateValues(t, o)
	r := render(t, "-f", values)
	if a := pluginArgs(t, r); a["policy"] != "bestfit" || a["tieBreak"] != o.TieBreak || rep.Recommendation.Policy != "bestfit" {
		t.Errorf("GPUPlacement args %v; simulated bestfit, %s", a, o.TieBreak)
	}
	checkTimeSlicing(t, agentConfig(t, r), 4)

	rep, values = simulateValues(t, migOptions(t))
	r = render(t, "-f", values)
	if a := pluginArgs(t, r); a["policy"] != "fgdcm" || a["tieBreak"] != "first" {
		t.Errorf("GPUPlacement args %v; simulated fgdcm, first", a)
	}
	if c := agentConfig(t, r); c.Flags.MIGStrategy != "mixed" {
		t.Errorf("migStrategy %q, want mixed", c.Flags.MIGStrategy)
	}
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", fullname+"-mig-parted-config", &cm)
	checkMIGLayouts(t, cm.Data["config.yaml"], rep.Sharing.MIGLayouts)

	// MIG on demand: the driver publishes MIG placements in the order
	// simulated, the chart's default or the table's, on the GPUs
	// simulated in MIG mode, which the mig-parted config enables with no
	// instance.
	for _, order := range []string{"", "table"} {
		o := migOptions(t)
		o.GPUAPI, o.DRAMIGOrder = "dra", order
		rep, values = simulateValues(t, o)
		r := render(t, "-f", values)
		want := "--dra-mig-order=" + map[string]string{"": "core", "table": "table"}[order]
		if _, c := agent(t, r); !slices.Contains(c.Args, "--kubelet-api=dra") || !slices.Contains(c.Args, want) {
			t.Errorf("MIG on demand, --dra-mig-order %q: agent args %v, want --kubelet-api=dra and %s", order, c.Args, want)
		}
		var cm corev1.ConfigMap
		r.get(t, "ConfigMap", fullname+"-mig-parted-config", &cm)
		checkMIGOnDemand(t, cm.Data["config.yaml"], rep.Sharing.MIGLayouts)
	}
}

// checkMIGOnDemand checks that the mig-parted config data puts the first
// MIGGPUsPerNode GPUs of each node group of uses in MIG mode with no MIG
// device (mig-devices {}, NVIDIA's "all-enabled") and the others out of
// it, under gpuplane-MODEL, the second group of a model gpuplane-MODEL-2.
func checkMIGOnDemand(t *testing.T, data string, uses []engine.MIGLayoutUse) {
	t.Helper()
	if len(uses) == 0 {
		t.Fatal("the run made no GPU of MIG on demand")
	}
	var cfg struct {
		MIGConfigs map[string][]struct {
			Devices    any             `json:"devices"`
			MIGEnabled bool            `json:"mig-enabled"`
			MIGDevices *map[string]int `json:"mig-devices"`
		} `json:"mig-configs"`
	}
	var all map[string]any
	if err := yaml.Unmarshal([]byte(data), &all); err != nil || all["version"] != "v1" {
		t.Fatalf("mig-parted config version %v (%v)\n%s", all["version"], err, data)
	}
	if err := yaml.Unmarshal([]byte(data), &cfg); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	groups := map[string]int{}
	for _, u := range uses {
		name := "gpuplane-" + strings.ToLower(u.Model)
		if groups[u.Model]++; groups[u.Model] > 1 {
			name += "-" + strconv.Itoa(groups[u.Model])
		}
		c := cfg.MIGConfigs[name]
		if len(c) == 0 || !c[0].MIGEnabled || c[0].MIGDevices == nil || len(*c[0].MIGDevices) != 0 {
			t.Errorf("%s: %+v, want its first entry in MIG mode with mig-devices {}\n%s", name, c, data)
			continue
		}
		var first []int
		for i := range u.MIGGPUsPerNode {
			first = append(first, i)
		}
		if got := fmt.Sprint(c[0].Devices); got != fmt.Sprint(first) && !(u.MIGGPUsPerNode == u.GPUsPerNode && got == "all") {
			t.Errorf("%s: MIG mode on GPUs %s, simulated %v", name, got, first)
		}
		if u.MIGGPUsPerNode < u.GPUsPerNode && (len(c) != 2 || c[1].MIGEnabled) {
			t.Errorf("%s: %+v, want its other GPUs out of MIG mode", name, c)
		}
	}
}

// TestSimulateValuesFile: without helm, the values file itself holds the
// simulated scheduler, agent configuration and MIG layouts, in the
// chart's keys, each read as its reader reads it.
func TestSimulateValuesFile(t *testing.T) {
	read := func(path string) map[string]any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := yaml.UnmarshalStrict(b, &v); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		return v
	}
	sub := func(v map[string]any, key string) []byte {
		b, err := yaml.Marshal(v[key])
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	_, values := simulateValues(t, timesliceOptions())
	v := read(values)
	if s := v["scheduler"].(map[string]any); s["enabled"] != true || s["policy"] != "bestfit" || s["tieBreak"] != cli.DefaultOptions().TieBreak {
		t.Errorf("scheduler %v", s)
	}
	c, err := configv1.ParseConfig("config", sub(v, "config"))
	if err != nil {
		t.Fatal(err)
	}
	checkTimeSlicing(t, c, 4)

	rep, values := simulateValues(t, migOptions(t))
	v = read(values)
	if s := v["scheduler"].(map[string]any); s["policy"] != "fgdcm" || s["tieBreak"] != "first" {
		t.Errorf("scheduler %v", s)
	}
	checkMIGLayouts(t, string(sub(v["migManager"].(map[string]any), "config")), rep.Sharing.MIGLayouts)
}

// checkTimeSlicing checks that c shares each GPU as n replicas.
func checkTimeSlicing(t *testing.T, c *configv1.Config, n int) {
	t.Helper()
	if rs := c.Sharing.TimeSlicing.Resources; len(rs) != 1 || rs[0].Name != "nvidia.com/gpu" || rs[0].Replicas != n {
		t.Errorf("time-slicing %+v, want nvidia.com/gpu x %d", rs, n)
	}
}

// checkMIGLayouts checks that the mig-parted config data gives each node
// group of uses its simulated layout, under gpuplane-MODEL, the second
// group of a model gpuplane-MODEL-2, and so on.
func checkMIGLayouts(t *testing.T, data string, uses []engine.MIGLayoutUse) {
	t.Helper()
	if len(uses) == 0 {
		t.Fatal("the mig run used no MIG layout")
	}
	groups := map[string]int{}
	for _, u := range uses {
		name := "gpuplane-" + strings.ToLower(u.Model)
		if groups[u.Model]++; groups[u.Model] > 1 {
			name += "-" + strconv.Itoa(groups[u.Model])
		}
		c, err := trace.ReadMIGConfig("config.yaml", strings.NewReader(data), name)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		want := slices.Sorted(slices.Values(u.Layout))
		for g := range u.GPUsPerNode {
			got, _ := c.Layout(u.Model, g)
			slices.Sort(got)
			if g >= u.MIGGPUsPerNode {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s GPU %d: layout %v, simulated %v", name, g, got, want)
			}
		}
	}
}
