// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/promql/parser"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/internal/cost/export"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/testenv"
)

const (
	alertsFile    = "../../../deploy/prometheus/gpuplane-alerts.yaml"
	dashboardFile = "../../../deploy/grafana/gpuplane-gpus.json"
)

// servedNames returns every metric name a scrape of an exporter serving all
// fields of a GPU, a MIG device and pods can carry, series names of
// histograms included.
func servedNames(t *testing.T) map[string]bool {
	t.Helper()
	full := device.Sample{UUID: "GPU-0000"}
	allFields(&full, 1)
	e, err := New(Options{Backend: newFakeBackend(testNode, nil), Pods: &fakePods{mapping: testMapping}})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(testNode)
	e.state.setMapping(testMapping)
	e.state.addSamples([]device.Sample{full}, time.Now())
	e.current.Store(e.state.snapshot())
	return gatheredNames(t, e)
}

// allFields sets every reading of s to v.
func allFields(s *device.Sample, v float64) {
	rv := reflect.ValueOf(s).Elem()
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Type() == reflect.TypeFor[*float64]() {
			f.Set(reflect.ValueOf(ptr(v)))
		}
	}
}

// gatheredNames returns the metric names e serves now, series names of
// histograms included.
func gatheredNames(t *testing.T, e *Exporter) map[string]bool {
	t.Helper()
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[mf.GetName()+s] = true
			}
		}
	}
	return names
}

// metricNames parses a PromQL expression and returns the metric names its
// selectors use.
func metricNames(expr string) ([]string, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == "__name__" {
					name = m.Value
				}
			}
			out = append(out, name)
		}
		return nil
	})
	return out, nil
}

// grafanaVars replaces Grafana's interval variables, which PromQL does not
// know, by a duration; label variables sit inside strings and parse as they
// are.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*[A-Za-z_][A-Za-z0-9_]*\)$`)

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

func TestAlertRules(t *testing.T) {
	served := servedNames(t)
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	if err := yaml.UnmarshalStrict(data, &rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	var alerts []string
	for _, g := range rf.Groups {
		if g.Name == "gpuplane-webhook" {
			// gpuplane-webhook's alerts, on its own metrics:
			// internal/webhook's TestAlertRules checks them.
			continue
		}
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			names, err := metricNames(r.Expr)
			if err != nil {
				t.Errorf("%s: alert %s: %v", alertsFile, r.Alert, err)
				continue
			}
			if len(names) == 0 {
				t.Errorf("%s: alert %s uses no metric", alertsFile, r.Alert)
			}
			for _, n := range names {
				if !served[n] {
					t.Errorf("%s: alert %s uses %s, which the exporter does not serve", alertsFile, r.Alert, n)
				}
			}
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" {
				t.Errorf("%s: rule %q needs alert, labels.severity and annotations.summary", alertsFile, r.Alert)
			}
			if r.For != "" {
				if _, err := time.ParseDuration(r.For); err != nil {
					t.Errorf("%s: alert %s: for: %v", alertsFile, r.Alert, err)
				}
			}
		}
	}
	// The alerts: GPU lost, XID, ECC, thermal, idle allocated GPU,
	// agent down.
	for _, want := range []string{"GPULost", "GPUXIDError", "GPUDoubleBitECCErrors", "GPUHighTemperature", "GPUAllocatedIdle", "GPUAgentDown"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("%s: no alert %s", alertsFile, want)
		}
	}
}

// TestAlertRulesWithPromtool evaluates the alerting rules with Prometheus's
// own rule engine (promtool test rules) on the series of
// testdata/alerts_test.yaml: the XID alert fires for XID 79 while the GPU is
// unhealthy, resolves when it recovers although the last XID stays 79, and
// never fires for XIDs 13 and 43 (applications'); GPUAgentDown fires 2
// minutes after a node's series end; GPUAllocatedIdle names each pod sharing
// an idle GPU and an idle MIG device's pod.
func TestAlertRulesWithPromtool(t *testing.T) {
	testenv.PromtoolTestRules(t, "testdata", "alerts_test.yaml")
}

// exprs returns every PromQL expression of a Grafana dashboard: panel
// targets and query variables.
func exprs(v any, path string, out map[string]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "." + k
			if s, ok := x.(string); ok && k == "expr" {
				out[p] = s
			}
			exprs(x, p, out)
		}
	case []any:
		for i, x := range v {
			exprs(x, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

func TestDashboard(t *testing.T) {
	served := servedNames(t)
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	found := map[string]string{}
	exprs(dash["panels"], "panels", found)
	// Query variables: label_values(SELECTOR, label).
	tmpl, _ := dash["templating"].(map[string]any)
	vars, _ := tmpl["list"].([]any)
	for i, v := range vars {
		m, _ := v.(map[string]any)
		if m["type"] != "query" {
			continue
		}
		q, _ := m["query"].(map[string]any)
		s, _ := q["query"].(string)
		lv := labelValues.FindStringSubmatch(s)
		if lv == nil {
			t.Errorf("%s: templating.list[%d]: query %q is not label_values(SELECTOR, label)", dashboardFile, i, s)
			continue
		}
		found["templating.list["+strconv.Itoa(i)+"]"] = lv[1]
	}
	if len(found) < 10 {
		t.Fatalf("%s: only %d expressions found", dashboardFile, len(found))
	}
	used := map[string]bool{}
	cost := costPanels(found)
	for where, expr := range found {
		names, err := metricNames(grafanaVars.Replace(expr))
		if err != nil {
			t.Errorf("%s: %s: %v", dashboardFile, where, err)
			continue
		}
		for _, n := range names {
			used[n] = true
			switch {
			case cost[where] && !costNames[n]:
				t.Errorf("%s: %s mixes %s, which gpuplane cost --serve does not serve, with cost series", dashboardFile, where, n)
			case !cost[where] && !served[n]:
				t.Errorf("%s: %s uses %s, which the exporter does not serve", dashboardFile, where, n)
			}
		}
	}
	// The money panels: cost by team and by namespace, idle cost (by
	// model), GPUs held and used (internal/cost/export's names).
	for _, n := range []string{metrics.CostTeamUSDPerSecond, metrics.CostNamespaceUSDPerSecond, metrics.CostIdleUSDPerSecond, metrics.CostTeamAllocatedGPUs, metrics.CostTeamUsedGPUs} {
		if !used[n] {
			t.Errorf("%s: no panel shows %s", dashboardFile, n)
		}
	}
	// The dashboard shows every DCGM field, a label field as a label.
	for _, f := range fields {
		shown := used[f.Name]
		if f.Type == Label {
			for _, expr := range found {
				shown = shown || strings.Contains(expr, f.Name)
			}
		}
		if !shown {
			t.Errorf("%s: no panel shows %s", dashboardFile, f.Name)
		}
	}
	// Every panel honours the node filter; cost panels only where their
	// series have a node (the idle cost), team and namespace costs are
	// cluster-wide.
	for where, expr := range found {
		if cost[where] {
			if strings.Contains(expr, metrics.CostIdleUSDPerSecond) && !strings.Contains(expr, `node=~"$node"`) {
				t.Errorf("%s: %s ignores the node filter: %s", dashboardFile, where, expr)
			}
			continue
		}
		if strings.HasPrefix(where, "panels") && !strings.Contains(expr, `Hostname=~"$node"`) {
			t.Errorf("%s: %s ignores the node filter: %s", dashboardFile, where, expr)
		}
	}
}

// costNames are the series of gpuplane cost --serve (internal/cost/export),
// which the dashboard's cost panels query instead of the agent's.
var costNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range export.Names() {
		m[n] = true
	}
	return m
}()

// usesCost says whether a PromQL expression selects a cost series.
func usesCost(expr string) bool {
	names, _ := metricNames(grafanaVars.Replace(expr))
	for _, n := range names {
		if costNames[n] {
			return true
		}
	}
	return false
}

// costPanels returns the expressions, by path, of the panels whose
// expressions select a cost series: every expression of such a panel.
func costPanels(found map[string]string) map[string]bool {
	panel := func(where string) string {
		if i := strings.Index(where, ".targets"); i >= 0 {
			return where[:i]
		}
		return where
	}
	costly := map[string]bool{}
	for where, expr := range found {
		if usesCost(expr) {
			costly[panel(where)] = true
		}
	}
	out := map[string]bool{}
	for where := range found {
		out[where] = costly[panel(where)]
	}
	return out
}

// dashboardPanels returns each panel's title and target expressions.
func dashboardPanels(t *testing.T) (panels map[string][]string, nodeVar string) {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	panels = map[string][]string{}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			panels[p.Title] = append(panels[p.Title], grafanaVars.Replace(tg.Expr))
		}
	}
	for _, v := range dash.Templating.List {
		if q, ok := v.Query.(map[string]any); ok && v.Name == "node" {
			nodeVar, _ = q["query"].(string)
		}
	}
	return panels, nodeVar
}

// alternatives returns, for each way a PromQL expression can give a result,
// the metric names that way needs: an "or" gives either operand's ways, any
// other operator needs one way of each operand.
func alternatives(t *testing.T, expr string) [][]string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(parser.Node) [][]string
	walk = func(n parser.Node) [][]string {
		switch x := n.(type) {
		case *parser.VectorSelector:
			name, _ := metricNames(x.String())
			return [][]string{name}
		case *parser.BinaryExpr:
			l, r := walk(x.LHS), walk(x.RHS)
			if x.Op == parser.LOR {
				return append(l, r...)
			}
			var out [][]string
			for _, a := range l {
				for _, b := range r {
					out = append(out, append(slices.Clone(a), b...))
				}
			}
			return out
		}
		out := [][]string{nil}
		for _, c := range parser.Children(n) {
			var next [][]string
			for _, a := range out {
				for _, b := range walk(c) {
					next = append(next, append(slices.Clone(a), b...))
				}
			}
			out = next
		}
		return out
	}
	return walk(e)
}

// mockExporter returns an exporter holding one sample of a mock profile
// (built-in or file), what the node agent serves for that node, with GPU 0 (or its
// first MIG device) held by a pod.
func mockExporter(t *testing.T, profile string) *Exporter {
	t.Helper()
	b, err := mock.Open(profile, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(context.Background())
	id := n.GPUs[0].UUID
	if len(n.GPUs[0].MIG) > 0 {
		id = n.GPUs[0].MIG[0].UUID
	}
	pods := &fakePods{mapping: &podresources.Mapping{Allocations: []podresources.Allocation{
		{ResourceName: "nvidia.com/gpu", DeviceID: id, Owner: owner("ml", "a", "main")}}}}
	e, err := New(Options{Backend: b, Hostname: "node-a", Pods: pods})
	if err != nil {
		t.Fatal(err)
	}
	e.state.setNode(n)
	e.state.setMapping(pods.mapping)
	ss, _ := b.Sample(context.Background())
	e.state.addSamples(ss, time.Now())
	e.current.Store(e.state.snapshot())
	return e
}

// TestDashboardFallsBackWithoutGPM: on GPUs without GPU Performance
// Monitoring (an L40S, Ada, and a V100, Volta: no DCGM_FI_PROF_* from
// NVML) every panel still has a query whose metrics they serve; the
// profiling panels fall back to DCGM_FI_DEV_GPU_UTIL and
// DCGM_FI_DEV_MEM_COPY_UTIL. Agent panels need only gpuplane's metrics.
func TestDashboardFallsBackWithoutGPM(t *testing.T) {
	panels, _ := dashboardPanels(t)
	for _, profile := range []string{"l40s-pcie-4", "dgx1-v100"} {
		served := gatheredNames(t, mockExporter(t, profile))
		for _, n := range []string{"gpuplane_scrape_duration_seconds_bucket", "gpuplane_backend_errors_total", "gpuplane_pod_resources_errors_total"} {
			served[n] = true // the agent's own metrics, served on every node
		}
		if served["DCGM_FI_PROF_GR_ENGINE_ACTIVE"] {
			t.Fatalf("%s serves profiling ratios; the test needs GPUs without GPM", profile)
		}
		for title, exprs := range panels {
			if slices.ContainsFunc(exprs, usesCost) {
				continue // gpuplane cost --serve's series, not the agent's
			}
			shown := false
			for _, expr := range exprs {
				for _, names := range alternatives(t, expr) {
					all := len(names) > 0
					for _, n := range names {
						all = all && served[n]
					}
					shown = shown || all
				}
			}
			if title == "NVLink bandwidth" && profile == "l40s-pcie-4" {
				shown = !shown // PCIe cards without NVLink: nothing to show
			}
			if !shown {
				t.Errorf("%s: panel %q is empty on %s", dashboardFile, title, profile)
			}
		}
	}
}

// TestNodeVariableOnAllMIGNode: on a node whose GPUs are all in MIG mode
// (NVML serves no DCGM_FI_DEV_GPU_UTIL there) the node variable's metric
// still carries the node name.
func TestNodeVariableOnAllMIGNode(t *testing.T) {
	_, q := dashboardPanels(t)
	lv := labelValues.FindStringSubmatch(q)
	if lv == nil || !strings.HasSuffix(q, ", Hostname)") {
		t.Fatalf("node variable %q is not label_values(SELECTOR, Hostname)", q)
	}
	names, err := metricNames(lv[1])
	if err != nil || len(names) != 1 {
		t.Fatalf("node variable selector %q: %v %v", lv[1], names, err)
	}
	profile := filepath.Join(t.TempDir(), "all-mig.yaml")
	if err := os.WriteFile(profile, []byte(`name: all-mig
gpus:
  - count: 2
    productName: NVIDIA A100-SXM4-80GB
    mig: [3g.40gb, 3g.40gb]
    telemetry: {utilizationPct: [50]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := mockExporter(t, profile)
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "DCGM_FI_DEV_GPU_UTIL" {
			t.Errorf("an all-MIG node serves DCGM_FI_DEV_GPU_UTIL: NVML has none in MIG mode")
		}
		if mf.GetName() != names[0] {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "Hostname" && l.GetValue() == "node-a" {
					return
				}
			}
		}
	}
	t.Errorf("node variable %q: no series with Hostname on an all-MIG node", q)
}

func TestMetricNamesRejectsBadPromQL(t *testing.T) {
	if _, err := metricNames(`rate(DCGM_FI_DEV_GPU_UTIL[5m]`); err == nil {
		t.Fatal("unbalanced parenthesis parsed")
	}
	got, err := metricNames(`max by (UUID) (DCGM_FI_DEV_GPU_UTIL{pod!=""}) / on(UUID) {__name__="DCGM_FI_DEV_FB_USED"}`)
	if err != nil || !slices.Equal(got, []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"}) {
		t.Fatalf("metricNames = %v, %v", got, err)
	}
}
