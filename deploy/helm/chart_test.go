// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package helm_test checks the Helm chart in deploy/helm/gpuplane with the
// real helm binary: lint, render with several value sets, decode the objects
// and check them, and check every flag the chart passes is one
// gpuplane-node-agent accepts.
package helm_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

const (
	chart     = "gpuplane"
	release   = "rel"
	namespace = "gpu-system"
	fullname  = "rel-gpuplane"

	devicePluginDir = "/var/lib/kubelet/device-plugins"
	podResourcesDir = "/var/lib/kubelet/pod-resources"
	labelsFile      = "/etc/kubernetes/node-feature-discovery/features.d/gpuplane"
)

// helmInstall is how CI gets helm (Debian has no package).
const helmInstall = "GOBIN=/usr/local/bin go install helm.sh/helm/v3/cmd/helm@v3.21.4"

// fullValues turns on everything optional.
const fullValues = `backend: mock
mock:
  profile: dgx-a100-80gb-mig
labelNode: true
labelsFile: ` + labelsFile + `
runtimeClassName: nvidia
serviceMonitor:
  enabled: true
prometheusRule:
  enabled: true
config:
  version: v1
  flags:
    migStrategy: mixed
    plugin:
      deviceListStrategy: [envvar]
  sharing:
    timeSlicing:
      renameByDefault: true
      resources:
        - name: nvidia.com/gpu
          replicas: 4
  gpuplane:
    replicaPolicy: pack
`

// helmBin returns the helm binary. Without one the test is skipped, unless
// CI is set, where it fails.
func helmBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("helm")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set but helm is not installed; CI must install it: %s", helmInstall)
		}
		t.Skipf("helm is not installed (%s)", helmInstall)
	}
	return p
}

func helm(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// kubeVersion is the Kubernetes version the chart is rendered for: the
// test cluster's (kube-apiserver and kubelet v1.37.2), the version
// gpuplane-scheduler is built from. helm template without --kube-version
// assumes v1.20.0, which the chart's kubeVersion refuses.
const kubeVersion = "v1.37.2"

// templateArgs returns the arguments of `helm template` of the chart as
// release in namespace for kubeVersion, then args: every chart test renders
// through it.
func templateArgs(args ...string) []string {
	return append([]string{"template", release, chart, "--namespace", namespace, "--kube-version", kubeVersion}, args...)
}

// writeValues writes fullValues to a file and returns its path.
func writeValues(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(fullValues), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// rendered is the output of helm template: the raw documents by kind and
// name.
type rendered map[string][]byte

func (r rendered) get(t *testing.T, kind, name string, into any) {
	t.Helper()
	doc, ok := r[kind+"/"+name]
	if !ok {
		t.Fatalf("no %s %s rendered; have %v", kind, name, r.keys())
	}
	if err := yaml.UnmarshalStrict(doc, into); err != nil {
		t.Fatalf("%s %s: %v\n%s", kind, name, err, doc)
	}
}

func (r rendered) keys() []string {
	var k []string
	for key := range r {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

func render(t *testing.T, args ...string) rendered {
	t.Helper()
	out := helm(t, templateArgs(args...)...)
	r := rendered{}
	for doc := range strings.SplitSeq(out, "\n---\n") {
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		if meta.Kind == "" {
			continue // comments only
		}
		key := meta.Kind + "/" + meta.Metadata.Name
		if _, dup := r[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		// The scheduler's binding to the authentication reader Role lives
		// where that Role is, in kube-system.
		authReader := meta.Kind == "RoleBinding" && meta.Metadata.Namespace == "kube-system" && strings.HasSuffix(meta.Metadata.Name, "-scheduler-auth-reader")
		if cluster := meta.Kind == "ClusterRole" || meta.Kind == "ClusterRoleBinding" || meta.Kind == "DeviceClass" || strings.HasSuffix(meta.Kind, "WebhookConfiguration") || strings.HasPrefix(meta.Kind, "ValidatingAdmissionPolicy") || strings.HasPrefix(meta.Kind, "MutatingAdmissionPolicy"); !cluster && !authReader && meta.Metadata.Namespace != namespace {
			t.Errorf("%s: namespace %q, want %q", key, meta.Metadata.Namespace, namespace)
		}
		r[key] = []byte(doc)
	}
	return r
}

func TestLint(t *testing.T) {
	helm(t, "lint", chart, "--strict", "--kube-version", kubeVersion)
	helm(t, "lint", chart, "--strict", "--kube-version", kubeVersion, "-f", writeValues(t))
}

// TestAlertsCopy checks the chart's copy of the alert rules is
// deploy/prometheus/gpuplane-alerts.yaml: after editing the rules there,
// cp deploy/prometheus/gpuplane-alerts.yaml deploy/helm/gpuplane/files/.
func TestAlertsCopy(t *testing.T) {
	want, err := os.ReadFile("../prometheus/gpuplane-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("gpuplane/files/gpuplane-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/helm/gpuplane/files/gpuplane-alerts.yaml differs from deploy/prometheus/gpuplane-alerts.yaml; copy it")
	}
}

// agent returns the DaemonSet and its one container.
func agent(t *testing.T, r rendered) (*appsv1.DaemonSet, corev1.Container) {
	t.Helper()
	var ds appsv1.DaemonSet
	r.get(t, "DaemonSet", fullname, &ds)
	cs := ds.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("DaemonSet has %d containers, want 1", len(cs))
	}
	return &ds, cs[0]
}

func TestTemplateDefaults(t *testing.T) {
	r := render(t)
	if got, want := r.keys(), []string{"DaemonSet/" + fullname, "Service/" + fullname, "ServiceAccount/" + fullname}; !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	ds, c := agent(t, r)
	checkArgs(t, c, []string{
		"--backend=nvml",
		"--device-plugin-dir=" + devicePluginDir,
		"--pod-resources-socket=" + podResourcesDir + "/kubelet.sock",
		"--metrics-addr=:9400",
	})
	checkCommon(t, r, ds, c, 9400)

	p := ds.Spec.Template.Spec
	// Node selection as NVIDIA's device-plugin chart's affinity
	// (deployments/helm/nvidia-device-plugin/values.yaml): NFD's NVIDIA PCI
	// label, or nvidia.com/gpu.present=true, which the agent writes.
	if len(p.NodeSelector) != 0 {
		t.Errorf("nodeSelector %v, want none", p.NodeSelector)
	}
	term := func(key string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}}
	}
	if a := p.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		!reflect.DeepEqual(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
			[]corev1.NodeSelectorTerm{term("feature.node.kubernetes.io/pci-10de.present"), term("nvidia.com/gpu.present")}) {
		t.Errorf("affinity %+v, want NFD's pci-10de.present or nvidia.com/gpu.present", p.Affinity)
	}
	// No API access configured: no service-account token.
	if p.AutomountServiceAccountToken == nil || *p.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want false", p.AutomountServiceAccountToken)
	}
	if c.SecurityContext.Capabilities.Add != nil || slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NVIDIA_MIG_MONITOR_DEVICES" }) {
		t.Errorf("MIG strategy none: capabilities %+v, env %+v; want no SYS_ADMIN, no NVIDIA_MIG_MONITOR_DEVICES", c.SecurityContext.Capabilities, c.Env)
	}
	if want := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}; !reflect.DeepEqual(p.Tolerations, want) {
		t.Errorf("tolerations %+v, want %+v", p.Tolerations, want)
	}
	if p.PriorityClassName != "system-node-critical" {
		t.Errorf("priorityClassName %q", p.PriorityClassName)
	}
	if p.RuntimeClassName != nil {
		t.Errorf("runtimeClassName %q, want none", *p.RuntimeClassName)
	}
	if len(p.Volumes) != 2 {
		t.Errorf("volumes %+v, want only the two hostPaths", p.Volumes)
	}
	if c.Image != "ghcr.io/gpuplane/gpuplane:0.1.0" {
		t.Errorf("image %q", c.Image)
	}
	for _, name := range []string{"NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"} {
		if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name }) {
			t.Errorf("backend nvml: no %s in env %+v", name, c.Env)
		}
	}
}

func TestTemplateFull(t *testing.T) {
	r := render(t, "-f", writeValues(t))
	// labelNode: the uninstall hook's four objects (prune_labels_test.go).
	want := []string{
		"ClusterRole/" + fullname, "ClusterRole/" + pruneName, "ClusterRoleBinding/" + fullname, "ClusterRoleBinding/" + pruneName,
		"ConfigMap/" + fullname, "DaemonSet/" + fullname, "Job/" + pruneName, "PrometheusRule/" + fullname, "Service/" + fullname,
		"ServiceAccount/" + fullname, "ServiceAccount/" + pruneName, "ServiceMonitor/" + fullname,
		"ValidatingAdmissionPolicy/" + fullname + "-node-agent", "ValidatingAdmissionPolicyBinding/" + fullname + "-node-agent",
	}
	if got := r.keys(); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	ds, c := agent(t, r)
	checkArgs(t, c, []string{
		"--backend=mock",
		"--mock-profile=dgx-a100-80gb-mig",
		"--device-plugin-dir=" + devicePluginDir,
		"--pod-resources-socket=" + podResourcesDir + "/kubelet.sock",
		"--metrics-addr=:9400",
		"--config=/etc/gpuplane/config.yaml",
		"--label-node",
		"--labels-file=" + labelsFile,
	})
	checkCommon(t, r, ds, c, 9400)
	p := ds.Spec.Template.Spec
	if p.RuntimeClassName == nil || *p.RuntimeClassName != "nvidia" {
		t.Errorf("runtimeClassName %v, want nvidia", p.RuntimeClassName)
	}
	if p.AutomountServiceAccountToken == nil || !*p.AutomountServiceAccountToken {
		t.Errorf("labelNode: automountServiceAccountToken %v, want true", p.AutomountServiceAccountToken)
	}
	if slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return strings.HasPrefix(e.Name, "NVIDIA_") }) {
		t.Errorf("backend mock: NVIDIA_ variables in env %+v", c.Env)
	}

	// The ConfigMap is mounted at --config's directory and holds a
	// configuration the agent accepts.
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", fullname, &cm)
	cfg, err := configv1.ParseConfig("config.yaml", []byte(cm.Data["config.yaml"]))
	if err != nil {
		t.Fatalf("ConfigMap config.yaml: %v\n%s", err, cm.Data["config.yaml"])
	}
	if cfg.Flags.MIGStrategy != "mixed" || cfg.Replicas("nvidia.com/gpu") != 4 {
		t.Errorf("config: MIG strategy %q, replicas %d; want mixed, 4", cfg.Flags.MIGStrategy, cfg.Replicas("nvidia.com/gpu"))
	}
	v := volume(t, ds, "/etc/gpuplane")
	if v.ConfigMap == nil || v.ConfigMap.Name != fullname {
		t.Errorf("/etc/gpuplane: volume %+v, want ConfigMap %s", v, fullname)
	}
	if ds.Spec.Template.Annotations["checksum/config"] == "" {
		t.Error("no checksum/config annotation on the pods")
	}
	v = volume(t, ds, filepath.Dir(labelsFile))
	if v.HostPath == nil || v.HostPath.Path != filepath.Dir(labelsFile) {
		t.Errorf("%s: volume %+v, want that hostPath", filepath.Dir(labelsFile), v)
	}

	// RBAC for --label-node: get and patch on nodes, bound to the pods'
	// service account; no right on pods without --scheduler-choice
	// (TestAgentRBACOnCluster).
	var role rbacv1.ClusterRole
	r.get(t, "ClusterRole", fullname, &role)
	if want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "patch"}},
	}; !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("ClusterRole rules %+v, want %+v", role.Rules, want)
	}
	var binding rbacv1.ClusterRoleBinding
	r.get(t, "ClusterRoleBinding", fullname, &binding)
	if binding.RoleRef.Kind != "ClusterRole" || binding.RoleRef.Name != fullname {
		t.Errorf("ClusterRoleBinding roleRef %+v", binding.RoleRef)
	}
	if want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: ds.Spec.Template.Spec.ServiceAccountName, Namespace: namespace}}; !reflect.DeepEqual(binding.Subjects, want) {
		t.Errorf("ClusterRoleBinding subjects %+v, want %+v", binding.Subjects, want)
	}

	var sm struct {
		APIVersion string `json:"apiVersion"`
		Spec       struct {
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			Endpoints []struct {
				Port string `json:"port"`
				Path string `json:"path"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(r["ServiceMonitor/"+fullname], &sm); err != nil {
		t.Fatal(err)
	}
	var svc corev1.Service
	r.get(t, "Service", fullname, &svc)
	if sm.APIVersion != "monitoring.coreos.com/v1" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("ServiceMonitor %+v", sm)
	}
	if !matches(sm.Spec.Selector.MatchLabels, svc.Labels) {
		t.Errorf("ServiceMonitor selector %v does not select the Service (labels %v)", sm.Spec.Selector.MatchLabels, svc.Labels)
	}

	// The PrometheusRule's spec is the alert rules file.
	var rule struct {
		APIVersion string         `json:"apiVersion"`
		Spec       map[string]any `json:"spec"`
	}
	if err := yaml.Unmarshal(r["PrometheusRule/"+fullname], &rule); err != nil {
		t.Fatal(err)
	}
	alerts, err := os.ReadFile("../prometheus/gpuplane-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want2 map[string]any
	if err := yaml.Unmarshal(alerts, &want2); err != nil {
		t.Fatal(err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || !reflect.DeepEqual(rule.Spec, want2) {
		t.Errorf("PrometheusRule %s spec differs from deploy/prometheus/gpuplane-alerts.yaml:\n%s", rule.APIVersion, r["PrometheusRule/"+fullname])
	}
}

// With a MIG strategy other than none, the container gets what NVIDIA's
// chart gives its device plugin (templates/_helpers.tpl:
// addMigMonitorDevices, nvidia-device-plugin.securityContext):
// NVIDIA_MIG_MONITOR_DEVICES=all and SYS_ADMIN.
func TestTemplateMIG(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		mig      bool
	}{{"none", false}, {"single", true}, {"mixed", true}} {
		_, c := agent(t, render(t, "--set", "config.version=v1", "--set", "config.flags.migStrategy="+tc.strategy))
		monitor := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "NVIDIA_MIG_MONITOR_DEVICES" && e.Value == "all" })
		sc := c.SecurityContext
		sysAdmin := sc != nil && sc.Capabilities != nil && slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_ADMIN"})
		if monitor != tc.mig || sysAdmin != tc.mig {
			t.Errorf("migStrategy %s: NVIDIA_MIG_MONITOR_DEVICES=all %v, SYS_ADMIN %v; want %v", tc.strategy, monitor, sysAdmin, tc.mig)
		}
		if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("migStrategy %s: securityContext %+v, want not privileged, drop ALL", tc.strategy, sc)
		}
	}
	// A strategy the agent would refuse at start is refused when rendering.
	out, err := exec.Command(helmBin(t), templateArgs("--set", "config.flags.migStrategy=bogus")...).CombinedOutput()
	if want := `config.flags.migStrategy: "bogus"; want none, single or mixed`; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("migStrategy bogus: %v %s, want %q", err, out, want)
	}
	// A securityContext given is used as is.
	_, c := agent(t, render(t, "--set", "config.flags.migStrategy=mixed", "--set", "securityContext.privileged=true"))
	if sc := c.SecurityContext; sc == nil || sc.Privileged == nil || !*sc.Privileged || sc.Capabilities != nil {
		t.Errorf("securityContext given: %+v", sc)
	}
}

// nodeFeatureAPI: the labels go through NFD's NodeFeature object, with a
// Role on nodefeatures in the release namespace and no right on Nodes.
func TestTemplateNodeFeature(t *testing.T) {
	r := render(t, "--set", "nodeFeatureAPI=true")
	want := []string{"DaemonSet/" + fullname, "Role/" + fullname + "-nodefeatures", "RoleBinding/" + fullname + "-nodefeatures", "Service/" + fullname, "ServiceAccount/" + fullname}
	if got := r.keys(); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	ds, c := agent(t, r)
	if !slices.Contains(c.Args, "--node-feature-api") || slices.Contains(c.Args, "--label-node") {
		t.Errorf("args %v, want --node-feature-api and no --label-node", c.Args)
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace"
	}) {
		t.Errorf("env %+v: no POD_NAMESPACE from metadata.namespace", c.Env)
	}
	if p := ds.Spec.Template.Spec; p.AutomountServiceAccountToken == nil || !*p.AutomountServiceAccountToken {
		t.Errorf("automountServiceAccountToken %v, want true", p.AutomountServiceAccountToken)
	}
	var role rbacv1.Role
	r.get(t, "Role", fullname+"-nodefeatures", &role)
	if want := []rbacv1.PolicyRule{{APIGroups: []string{"nfd.k8s-sigs.io"}, Resources: []string{"nodefeatures"}, Verbs: []string{"get", "create", "update"}}}; !reflect.DeepEqual(role.Rules, want) {
		t.Errorf("Role rules %+v, want %+v", role.Rules, want)
	}
	var binding rbacv1.RoleBinding
	r.get(t, "RoleBinding", fullname+"-nodefeatures", &binding)
	if binding.RoleRef.Name != role.Name || len(binding.Subjects) != 1 || binding.Subjects[0].Name != ds.Spec.Template.Spec.ServiceAccountName {
		t.Errorf("RoleBinding %+v", binding)
	}
}

func TestTemplatePort(t *testing.T) {
	r := render(t, "--set", "metrics.port=9500")
	ds, c := agent(t, r)
	if !slices.Contains(c.Args, "--metrics-addr=:9500") {
		t.Errorf("args %q: no --metrics-addr=:9500", c.Args)
	}
	checkCommon(t, r, ds, c, 9500)
}

// checkArgs checks the container runs gpuplane-node-agent with exactly
// these args.
func checkArgs(t *testing.T, c corev1.Container, want []string) {
	t.Helper()
	if !slices.Equal(c.Command, []string{"gpuplane-node-agent"}) {
		t.Errorf("command %q, want [gpuplane-node-agent]", c.Command)
	}
	if !slices.Equal(c.Args, want) {
		t.Errorf("args\n%q\nwant\n%q", c.Args, want)
	}
}

// checkCommon checks what every value set renders: host paths, NODE_NAME,
// security context, probes, ports and the Service, the service account.
func checkCommon(t *testing.T, r rendered, ds *appsv1.DaemonSet, c corev1.Container, port int32) {
	t.Helper()
	for _, dir := range []string{devicePluginDir, podResourcesDir} {
		v := volume(t, ds, dir)
		if v.HostPath == nil || v.HostPath.Path != dir {
			t.Errorf("%s: volume %+v, want hostPath %s", dir, v, dir)
		}
	}

	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName"
	}) {
		t.Errorf("env %+v: no NODE_NAME from spec.nodeName", c.Env)
	}

	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("securityContext %+v: want not privileged, no escalation, drop ALL", sc)
	}

	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != port {
		t.Errorf("ports %+v, want metrics %d", c.Ports, port)
	}
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/metrics" || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("%s probe %+v: want GET /metrics on port metrics", name, p)
		}
	}

	pod := ds.Spec.Template
	if !matches(ds.Spec.Selector.MatchLabels, pod.Labels) {
		t.Errorf("DaemonSet selector %v does not select its pods (labels %v)", ds.Spec.Selector.MatchLabels, pod.Labels)
	}
	var sa corev1.ServiceAccount
	r.get(t, "ServiceAccount", pod.Spec.ServiceAccountName, &sa)

	var svc corev1.Service
	r.get(t, "Service", fullname, &svc)
	if !matches(svc.Spec.Selector, pod.Labels) {
		t.Errorf("Service selector %v does not select the pods (labels %v)", svc.Spec.Selector, pod.Labels)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != port || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service ports %+v", svc.Spec.Ports)
	}
	want := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": strconv.Itoa(int(port)), "prometheus.io/path": "/metrics"}
	if !reflect.DeepEqual(svc.Annotations, want) {
		t.Errorf("Service annotations %v, want %v", svc.Annotations, want)
	}
}

// volume returns the pod volume the container mounts at path.
func volume(t *testing.T, ds *appsv1.DaemonSet, path string) corev1.Volume {
	t.Helper()
	p := ds.Spec.Template.Spec
	for _, m := range p.Containers[0].VolumeMounts {
		if m.MountPath != path {
			continue
		}
		for _, v := range p.Volumes {
			if v.Name == m.Name {
				return v
			}
		}
		t.Fatalf("mount %s: no volume %s", path, m.Name)
	}
	t.Fatalf("nothing mounted at %s", path)
	return corev1.Volume{}
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// TestFlagsAccepted checks every flag the chart passes, with every value set
// above, is a flag of gpuplane-node-agent (from its --help).
func TestFlagsAccepted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the gpuplane-node-agent binary")
	}
	var used []string
	for _, args := range [][]string{nil, {"-f", writeValues(t)}, {"--set", "nodeFeatureAPI=true"}, {"--set", "scheduler.enabled=true"},
		{"--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.cdiDir=/var/run/cdi", "--set", "nodeAgent.dra.shares=true"},
		{"--set", "nodeConfigs.name=configs,nodeConfigs.default=t4"}} {
		_, c := agent(t, render(t, args...))
		for _, a := range c.Args {
			name, _, _ := strings.Cut(a, "=")
			used = append(used, name)
		}
	}

	bin := filepath.Join(t.TempDir(), "gpuplane-node-agent")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpuplane/gpuplane/cmd/gpuplane-node-agent").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("gpuplane-node-agent --help: %v\n%s", err, out)
	}
	accepted := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(?:-\w, )?(--[\w-]+)`).FindAllStringSubmatch(string(out), -1) {
		accepted[m[1]] = true
	}
	if !accepted["--backend"] || !accepted["--metrics-addr"] {
		t.Fatalf("could not read the flags from gpuplane-node-agent --help:\n%s", out)
	}
	for _, f := range used {
		if !accepted[f] {
			t.Errorf("the chart passes %s, which gpuplane-node-agent does not accept", f)
		}
	}
}

// nodeAgent.kubeletAPI dra installs NVIDIA's DRA driver's two device
// classes; the default, device-plugin, none; anything else is refused.
func TestTemplateDeviceClasses(t *testing.T) {
	r := render(t)
	for _, k := range r.keys() {
		if strings.HasPrefix(k, "DeviceClass/") {
			t.Errorf("default kubeletAPI: %s rendered", k)
		}
	}
	r = render(t, "--set", "nodeAgent.kubeletAPI=dra")
	for _, tc := range []struct{ name, typ, ext string }{{"gpu.nvidia.com", "gpu", "nvidia.com/gpu"}, {"mig.nvidia.com", "mig", ""}} {
		var dc resourcev1.DeviceClass
		r.get(t, "DeviceClass", tc.name, &dc)
		want := "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '" + tc.typ + "'"
		if dc.APIVersion != "resource.k8s.io/v1" || len(dc.Spec.Selectors) != 1 || dc.Spec.Selectors[0].CEL == nil || dc.Spec.Selectors[0].CEL.Expression != want {
			t.Errorf("%s: %+v", tc.name, dc)
		}
		if got := ptr.Deref(dc.Spec.ExtendedResourceName, ""); got != tc.ext {
			t.Errorf("%s: extendedResourceName %q, want %q", tc.name, got, tc.ext)
		}
	}
	out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.kubeletAPI=bogus")...).CombinedOutput()
	if want := `nodeAgent.kubeletAPI: "bogus"; want device-plugin or dra`; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("kubeletAPI bogus: %v %s, want %q", err, out, want)
	}
}

// nodeAgent.kubeletAPI dra runs the agent as the DRA plugin: the flags,
// the kubelet's plugin directories from the host, the API token and the
// rights on ResourceSlices and ResourceClaims.
func TestTemplateDRA(t *testing.T) {
	r := render(t, "--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.cdiDir=/var/run/cdi")
	ds, c := agent(t, r)
	for _, want := range []string{"--kubelet-api=dra", "--dra-plugin-dir=/var/lib/kubelet/plugins/gpu.nvidia.com", "--dra-registrar-dir=/var/lib/kubelet/plugins_registry", "--cdi-dir=/var/run/cdi"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %v lack %s", c.Args, want)
		}
	}
	if slices.Contains(c.Args, "--dra-shares") {
		t.Error("--dra-shares without nodeAgent.dra.shares")
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	hosts := map[string]string{}
	for _, v := range ds.Spec.Template.Spec.Volumes {
		if v.HostPath != nil {
			hosts[v.Name] = v.HostPath.Path
		}
	}
	// MIG devices are created through NVML: SYS_ADMIN and the MIG
	// configuration capability (NVIDIA's DRA driver's chart sets
	// NVIDIA_MIG_CONFIG_DEVICES=all on its plugin).
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if sc := c.SecurityContext; sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_ADMIN"}) || ptr.Deref(sc.Privileged, true) || env["NVIDIA_MIG_CONFIG_DEVICES"] != "all" || env["NVIDIA_MIG_MONITOR_DEVICES"] != "all" {
		t.Errorf("DRA on nvml: securityContext %+v, env %v; want SYS_ADMIN, not privileged, the MIG config and monitor capabilities", c.SecurityContext, env)
	}
	if _, c := agent(t, render(t, "--set", "nodeAgent.kubeletAPI=dra", "--set", "backend=mock")); c.SecurityContext.Capabilities.Add != nil {
		t.Errorf("DRA on mock: capabilities %+v, want none added", c.SecurityContext.Capabilities)
	}
	if _, ok := mounts["cdi-toolkit"]; ok || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--cdi-toolkit-spec") }) {
		t.Error("a toolkit spec without nodeAgent.dra.cdiToolkitSpec")
	}
	for name, path := range map[string]string{"dra-plugins": "/var/lib/kubelet/plugins", "dra-registrar": "/var/lib/kubelet/plugins_registry", "cdi": "/var/run/cdi"} {
		if mounts[name] != path || hosts[name] != path {
			t.Errorf("volume %s: mounted at %q from host %q, want %s", name, mounts[name], hosts[name], path)
		}
	}
	if at := ds.Spec.Template.Spec.AutomountServiceAccountToken; at == nil || !*at {
		t.Error("no API token with kubeletAPI dra")
	}
	var role rbacv1.ClusterRole
	r.get(t, "ClusterRole", fullname+"-dra", &role)
	rights := map[string][]string{}
	for _, rule := range role.Rules {
		for _, res := range rule.Resources {
			rights[res] = rule.Verbs
		}
	}
	if !slices.Equal(rights["resourceslices"], []string{"list", "watch", "create", "update", "delete"}) || !slices.Equal(rights["resourceclaims"], []string{"get"}) || !slices.Equal(rights["nodes"], []string{"get"}) {
		t.Errorf("DRA rights: %v", rights)
	}
	var binding rbacv1.ClusterRoleBinding
	r.get(t, "ClusterRoleBinding", fullname+"-dra", &binding)
	// Not in device-plugin mode.
	for _, k := range render(t).keys() {
		if strings.HasSuffix(k, "-dra") {
			t.Errorf("default kubeletAPI: %s rendered", k)
		}
	}
}

// nodeAgent.dra.computeShareMemory must be a memory quantity: it is put
// in the policy's CEL.
func TestTemplateDRAComputeShareMemory(t *testing.T) {
	for _, bad := range []string{"1Mb", "1Mi'})", "-1Mi"} {
		out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.shares=true", "--set", "nodeAgent.dra.computeShareMemory="+bad, "--api-versions", "admissionregistration.k8s.io/v1/MutatingAdmissionPolicy")...).CombinedOutput()
		if want := "nodeAgent.dra.computeShareMemory: \""; err == nil || !strings.Contains(string(out), want) {
			t.Errorf("%q: %v %s, want %s", bad, err, out, want)
		}
	}
}

// nodeAgent.dra.cdiToolkitSpec passes --cdi-toolkit-spec; a spec outside
// cdiDir has its directory mounted read-only, one inside none more;
// without cdiDir the template fails (the agent would refuse the flag).
func TestTemplateDRAToolkitSpec(t *testing.T) {
	out, err := exec.Command(helmBin(t), templateArgs("--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.cdiToolkitSpec=/etc/cdi/nvidia.yaml")...).CombinedOutput()
	if want := "nodeAgent.dra.cdiToolkitSpec needs nodeAgent.dra.cdiDir"; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("a toolkit spec without cdiDir: %v %s, want %s", err, out, want)
	}
	for _, tc := range []struct{ spec, mount string }{
		{"/etc/cdi/nvidia.yaml", "/etc/cdi"},
		{"/var/run/cdi/nvidia.yaml", ""},
	} {
		r := render(t, "--set", "nodeAgent.kubeletAPI=dra", "--set", "nodeAgent.dra.cdiDir=/var/run/cdi", "--set", "nodeAgent.dra.cdiToolkitSpec="+tc.spec)
		ds, c := agent(t, r)
		if !slices.Contains(c.Args, "--cdi-toolkit-spec="+tc.spec) {
			t.Errorf("%s: args %v", tc.spec, c.Args)
		}
		var mount, host string
		var ro bool
		for _, m := range c.VolumeMounts {
			if m.Name == "cdi-toolkit" {
				mount, ro = m.MountPath, m.ReadOnly
			}
		}
		for _, v := range ds.Spec.Template.Spec.Volumes {
			if v.Name == "cdi-toolkit" && v.HostPath != nil {
				host = v.HostPath.Path
			}
		}
		if mount != tc.mount || host != tc.mount || (tc.mount != "" && !ro) {
			t.Errorf("%s: cdi-toolkit mounted at %q (read-only %v) from %q, want %q read-only", tc.spec, mount, ro, host, tc.mount)
		}
	}
}
