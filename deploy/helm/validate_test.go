// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// templateErr runs helm template with args and returns its output and
// error, for the renders the chart must refuse.
func templateErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(helmBin(t), templateArgs(args...)...).CombinedOutput()
	return string(out), err
}

// refused checks helm template with args fails with want in its message.
func refused(t *testing.T, want string, args ...string) {
	t.Helper()
	out, err := templateErr(t, args...)
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("helm template %v: err %v, want an error with %q:\n%s", args, err, want, out)
	}
}

// valuesFile writes values to a file and returns its path.
func valuesFile(t *testing.T, values string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(values), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigsAgreeWithAgent runs the agent's own parser
// (configv1.ParseConfig, what gpuplane-node-agent --config runs) over each
// testdata/configs/*.yaml and renders it as the chart's config: the chart
// renders exactly the configs the agent accepts. The first line of each
// file says which it is (# chart: renders or # chart: refuses), so a rule
// changed on one side only fails here.
func TestConfigsAgreeWithAgent(t *testing.T) {
	files, err := filepath.Glob("testdata/configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/configs/*.yaml: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			var want bool
			switch first {
			case "# chart: renders":
				want = true
			case "# chart: refuses":
			default:
				t.Fatalf("first line %q, want # chart: renders or # chart: refuses", first)
			}
			_, agentErr := configv1.ParseConfig(f, data)
			if (agentErr == nil) != want {
				t.Errorf("the agent's parser: %v, the file says %q", agentErr, first)
			}
			values := "config:\n  " + strings.ReplaceAll(strings.TrimRight(string(data), "\n"), "\n", "\n  ") + "\n"
			out, chartErr := templateErr(t, "-f", valuesFile(t, values))
			if (chartErr == nil) != want {
				t.Errorf("the chart: %v, the file says %q (the agent: %v)\n%s", chartErr, first, agentErr, out)
			}
			if chartErr != nil && !strings.Contains(out, "config.") {
				t.Errorf("the chart's error does not name the value:\n%s", out)
			}
			// The same as one of nodeConfigs.configs, in NVIDIA's chart's
			// form (YAML text).
			values = "nodeConfigs:\n  configs:\n    it: |\n      " + strings.ReplaceAll(strings.TrimRight(string(data), "\n"), "\n", "\n      ") + "\n"
			out, chartErr = templateErr(t, "-f", valuesFile(t, values))
			if (chartErr == nil) != want {
				t.Errorf("the chart, as nodeConfigs.configs.it: %v, the file says %q\n%s", chartErr, first, out)
			}
			if chartErr != nil && !strings.Contains(out, "nodeConfigs.configs.it") {
				t.Errorf("the chart's error does not name nodeConfigs.configs.it:\n%s", out)
			}
		})
	}
}

// TestPolicyNames: the chart knows exactly placement.Names (the one home
// of the policy names): each renders, and an unknown one is refused with
// that list and, for a near miss, what was meant.
func TestPolicyNames(t *testing.T) {
	for _, name := range placement.Names {
		if out, err := templateErr(t, "--set", "scheduler.enabled=true,scheduler.policy="+name); err != nil {
			t.Errorf("policy %s: %v\n%s", name, err, out)
		}
	}
	out, err := templateErr(t, "--set", "scheduler.enabled=true,scheduler.policy=zzz")
	if err == nil {
		t.Fatal("policy zzz rendered")
	}
	const prefix = `scheduler.policy: "zzz" is not a policy; want one of `
	i := strings.Index(out, prefix)
	if i < 0 {
		t.Fatalf("no %q in:\n%s", prefix, out)
	}
	list, _, _ := strings.Cut(out[i+len(prefix):], "\n")
	if got := strings.Split(list, ", "); !slices.Equal(got, placement.Names) {
		t.Errorf("the chart's policies %v, placement.Names %v", got, placement.Names)
	}
	for _, tc := range []struct{ given, meant string }{
		{"fdg", "fgd"},                      // letters swapped
		{"FGDCM", "fgdcm"},                  // case
		{"best-fit", "bestfit"},             // a dash
		{"leastalocated", "leastallocated"}, // a letter left out
		{"mostallocatedd", "mostallocated"}, // a letter added
		{"gpupackinh", "gpupacking"},        // a letter replaced
		{"fgdc", "fgd or fgdcm"},            // one away from both
	} {
		refused(t, `scheduler.policy: "`+tc.given+`" is not a policy (did you mean `+tc.meant+`?)`, "--set", "scheduler.enabled=true,scheduler.policy="+tc.given)
	}
}

// TestKubeVersion: Chart.yaml's kubeVersion (1.30, ValidatingAdmissionPolicy
// v1) refuses older clusters; gpuplane-scheduler (kube-scheduler v1.37.2)
// is refused below 1.37, DRA (resource.k8s.io/v1) and the webhook's CEL
// policy below 1.34, each naming the value.
func TestKubeVersion(t *testing.T) {
	if out, err := exec.Command(helmBin(t), "template", release, chart, "--kube-version", "v1.29.9").CombinedOutput(); err == nil || !strings.Contains(string(out), "chart requires kubeVersion: >=1.30.0-0") {
		t.Errorf("Kubernetes 1.29: %v\n%s", err, out)
	}
	if out, err := exec.Command(helmBin(t), "template", release, chart, "--kube-version", "v1.30.0").CombinedOutput(); err != nil {
		t.Errorf("Kubernetes 1.30, the defaults: %v\n%s", err, out)
	}
	refused(t, "scheduler.enabled: gpuplane-scheduler is kube-scheduler v1.37.2 and needs Kubernetes 1.37 or later; the cluster is v1.36.4",
		"--kube-version", "v1.36.4", "--set", "scheduler.enabled=true")
	refused(t, "nodeAgent.kubeletAPI: dra needs Kubernetes 1.34 or later", "--kube-version", "v1.33.1", "--set", "nodeAgent.kubeletAPI=dra")
	refused(t, "webhook.admissionPolicy.enabled: its CEL needs Kubernetes 1.34 or later", "--kube-version", "v1.33.1", "-f", valuesFile(t, webhookValues))
	// A pre-release of 1.37 is 1.37.
	if out, err := exec.Command(helmBin(t), "template", release, chart, "--kube-version", "v1.37.0-rc.1", "--set", "scheduler.enabled=true").CombinedOutput(); err != nil {
		t.Errorf("Kubernetes v1.37.0-rc.1 with the scheduler: %v\n%s", err, out)
	}
}

// TestMutatingAdmissionPoliciesValue: auto renders the
// MutatingAdmissionPolicies where helm knows the API is served, true always
// (offline renderers), false never; anything else is refused.
func TestMutatingAdmissionPoliciesValue(t *testing.T) {
	dra := []string{"--set", "nodeAgent.kubeletAPI=dra,nodeAgent.dra.shares=true"}
	webhook := []string{"-f", valuesFile(t, webhookValues)}
	for _, tc := range []struct {
		value  string
		api    bool
		policy bool
	}{
		{"auto", false, false},
		{"auto", true, true},
		{"true", false, true},
		{"false", true, false},
	} {
		for _, base := range [][]string{dra, webhook} {
			args := append(slices.Clone(base), "--set", "mutatingAdmissionPolicies="+tc.value)
			if tc.api {
				args = append(args, mapAPI...)
			}
			keys := render(t, args...).keys()
			got := slices.ContainsFunc(keys, func(k string) bool { return strings.HasPrefix(k, "MutatingAdmissionPolicy/") })
			if got != tc.policy {
				t.Errorf("%s, API served %v, %v: a MutatingAdmissionPolicy %v, want %v", tc.value, tc.api, base, got, tc.policy)
			}
		}
	}
	refused(t, `mutatingAdmissionPolicies: "maybe"; want auto, true or false`, "--set", "mutatingAdmissionPolicies=maybe")
}

// TestWebhookDisruption: the webhook's two replicas have a
// PodDisruptionBudget (one may go at a time) and are spread over nodes and
// zones, selecting the webhook's own pods; one replica has no budget.
func TestWebhookDisruption(t *testing.T) {
	r := renderWebhook(t)
	var pdb policyv1.PodDisruptionBudget
	r.get(t, "PodDisruptionBudget", webhookName, &pdb)
	want := map[string]string{"app.kubernetes.io/name": "gpuplane-webhook", "app.kubernetes.io/instance": release}
	if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.Selector == nil || !equalJSON(t, pdb.Spec.Selector.MatchLabels, want) {
		t.Errorf("PodDisruptionBudget spec %+v, want maxUnavailable 1 over %v", pdb.Spec, want)
	}
	var d appsv1.Deployment
	r.get(t, "Deployment", webhookName, &d)
	var keys []string
	for _, c := range d.Spec.Template.Spec.TopologySpreadConstraints {
		keys = append(keys, c.TopologyKey)
		if c.LabelSelector == nil || !equalJSON(t, c.LabelSelector.MatchLabels, want) || c.MaxSkew != 1 || c.WhenUnsatisfiable != "ScheduleAnyway" {
			t.Errorf("spread %+v, want maxSkew 1, ScheduleAnyway over %v", c, want)
		}
	}
	if !slices.Equal(keys, []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}) {
		t.Errorf("spread over %v", keys)
	}
	one := render(t, "-f", valuesFile(t, webhookValues), "--set", "webhook.replicas=1")
	if _, ok := one["PodDisruptionBudget/"+webhookName]; ok {
		t.Error("one replica has a PodDisruptionBudget: it would block every drain")
	}
}

// TestDeviceClassesCreate: deviceClasses.create false leaves NVIDIA's DRA
// chart's DeviceClasses alone (same names); the DRA DaemonSet still runs.
func TestDeviceClassesCreate(t *testing.T) {
	for _, api := range []string{"nodeAgent.kubeletAPI=dra", "nodeAgent.perNode=true"} {
		r := render(t, "--set", api+",deviceClasses.create=false")
		for _, k := range r.keys() {
			if strings.HasPrefix(k, "DeviceClass/") {
				t.Errorf("%s, deviceClasses.create=false: %s rendered", api, k)
			}
		}
		if _, ok := r["ClusterRole/"+fullname+"-dra"]; !ok {
			t.Errorf("%s: no DRA ClusterRole; have %v", api, r.keys())
		}
	}
}

// notes renders the chart's NOTES.txt with args, as helm install prints
// it: helm template leaves the notes out and helm install has no
// --kube-version, so a copy of the chart renders them as a value.
func notes(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), chart)
	if err := os.CopyFS(dir, os.DirFS(chart)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "templates", "NOTES.txt"), filepath.Join(dir, "notes.tmpl")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes.yaml"), []byte(`notes: {{ tpl (.Files.Get "notes.tmpl") . | toJson }}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := helm(t, append([]string{"template", release, dir, "--namespace", namespace, "--kube-version", kubeVersion, "--show-only", "templates/notes.yaml"}, args...)...)
	var doc struct{ Notes string }
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return doc.Notes
}

// TestNotes: the notes name the agent's DaemonSet and its nodes in words,
// for the defaults (NFD's NVIDIA PCI label or nvidia.com/gpu.present, with
// the command that sets the second), a nodeSelector, and every node.
func TestNotes(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		first string
		label bool
	}{
		{nil, "gpuplane-node-agent (nvml backend, device-plugin API, DaemonSet gpu-system/rel-gpuplane) runs on\n  the nodes labelled feature.node.kubernetes.io/pci-10de.present=true or nvidia.com/gpu.present=true.\n", true},
		{[]string{"--set", "backend=mock,nodeSelector.pool=gpu,affinity=null"}, "gpuplane-node-agent (mock backend, device-plugin API, DaemonSet gpu-system/rel-gpuplane) runs on\n  the nodes labelled pool=gpu.\n", false},
		{[]string{"--set", "affinity=null,nodeAgent.perNode=true"}, "gpuplane-node-agent (nvml backend, DaemonSets gpu-system/rel-gpuplane-device-plugin and rel-gpuplane-dra by the node label gpuplane.io/kubelet-api) runs on\n  every node.\n", false},
	} {
		got := notes(t, tc.args...)
		if !strings.HasPrefix(got, tc.first) {
			t.Errorf("%v: notes begin\n%s\nwant\n%s", tc.args, got, tc.first)
		}
		if label := strings.Contains(got, "kubectl label node <node> nvidia.com/gpu.present=true"); label != tc.label {
			t.Errorf("%v: the labelling hint %v, want %v:\n%s", tc.args, label, tc.label, got)
		}
		if strings.Contains(got, "{}") || strings.Contains(got, "map[") {
			t.Errorf("%v: notes print a raw value:\n%s", tc.args, got)
		}
	}
	got := notes(t, "--set-json", `nodeConfigs={"configs":{"t4":{"version":"v1"},"a100":{"version":"v1"}},"default":"t4"}`)
	if want := "One configuration per node, the keys of ConfigMap gpu-system/rel-gpuplane-configs (a100, t4): a node's label names its own,\n  kubectl label node <node> nvidia.com/device-plugin.config=<key> --overwrite\nand its agent restarts with it; an unlabelled node takes t4.\n"; !strings.Contains(got, want) {
		t.Errorf("nodeConfigs: notes\n%s\nlack\n%s", got, want)
	}
	if got := notes(t); strings.Contains(got, "One configuration per node") {
		t.Errorf("no nodeConfigs: notes\n%s", got)
	}
}
