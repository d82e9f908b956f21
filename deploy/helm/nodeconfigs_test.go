// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
)

// nodeConfigsValues: a cluster of MIG A100s and time-sliced T4s, the
// second in NVIDIA's chart's form (YAML text).
const nodeConfigsValues = `nodeConfigs:
  default: default
  configs:
    default: {version: v1}
    a100-mig: {version: v1, flags: {migStrategy: mixed}}
    t4-shared: |-
      version: v1
      sharing:
        timeSlicing:
          resources: [{name: nvidia.com/gpu, replicas: 4}]
`

// TestNodeConfigsTemplate: nodeConfigs.configs renders a ConfigMap of one
// key per configuration, each one the agent's parser accepts, mounted as
// --config-dir with the default and the fallbacks; the agent may get and
// watch nodes (its label), SYS_ADMIN is added for the MIG configuration.
func TestNodeConfigsTemplate(t *testing.T) {
	r := render(t, "-f", valuesFile(t, nodeConfigsValues))
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", fullname+"-configs", &cm)
	var keys []string
	for k, v := range cm.Data {
		keys = append(keys, k)
		if _, err := configv1.ParseConfig(k, []byte(v)); err != nil {
			t.Errorf("%s: the agent refuses it: %v", k, err)
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"a100-mig", "default", "t4-shared"}) {
		t.Errorf("ConfigMap keys %v", keys)
	}
	if c, err := configv1.ParseConfig("t4-shared", []byte(cm.Data["t4-shared"])); err != nil || c.Replicas("nvidia.com/gpu") != 4 {
		t.Errorf("t4-shared: %+v, %v; want 4 replicas", c, err)
	}
	ds, c := agent(t, r)
	for _, a := range []string{"--config-dir=/etc/gpuplane/configs", "--default-config=default", "--fallback-strategies=named,single"} {
		if !slices.Contains(c.Args, a) {
			t.Errorf("args %v lack %s", c.Args, a)
		}
	}
	if slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--config=") }) {
		t.Errorf("args %v pass --config too", c.Args)
	}
	mounted := slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
		return m.Name == "configs" && m.MountPath == "/etc/gpuplane/configs" && m.ReadOnly
	})
	fromCM := slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Name == "configs" && v.ConfigMap != nil && v.ConfigMap.Name == fullname+"-configs"
	})
	if !mounted || !fromCM {
		t.Errorf("configs mounted %v from the ConfigMap %v", mounted, fromCM)
	}
	if sc := c.SecurityContext; sc == nil || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_ADMIN"}) {
		t.Errorf("securityContext %+v, want SYS_ADMIN added for a100-mig", sc)
	}
	var role rbacv1.ClusterRole
	r.get(t, "ClusterRole", fullname, &role)
	if !slices.ContainsFunc(role.Rules, func(p rbacv1.PolicyRule) bool {
		return slices.Equal(p.Resources, []string{"nodes"}) && slices.Equal(p.Verbs, []string{"get", "list", "watch"})
	}) {
		t.Errorf("ClusterRole rules %+v lack get, list, watch on nodes", role.Rules)
	}

	// A ConfigMap of the user's (the GPU Operator's): mounted by name.
	r = render(t, "--set", "nodeConfigs.name=time-slicing-config")
	ds, _ = agent(t, r)
	if !slices.ContainsFunc(ds.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Name == "configs" && v.ConfigMap != nil && v.ConfigMap.Name == "time-slicing-config"
	}) {
		t.Errorf("volumes %+v do not mount time-slicing-config", ds.Spec.Template.Spec.Volumes)
	}
	if _, ok := r["ConfigMap/"+fullname+"-configs"]; ok {
		t.Error("nodeConfigs.name renders the chart's ConfigMap too")
	}
}

// TestNodeConfigsRefused: what the agent would refuse at start.
func TestNodeConfigsRefused(t *testing.T) {
	nc := valuesFile(t, nodeConfigsValues)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"config and nodeConfigs exclude each other", []string{"-f", nc, "--set", "config.version=v1"}},
		{"nodeConfigs.configs and nodeConfigs.name exclude each other", []string{"-f", nc, "--set", "nodeConfigs.name=x"}},
		{`nodeConfigs.default: "t4" is not one of nodeConfigs.configs (a100-mig, default, t4-shared)`, []string{"-f", nc, "--set", "nodeConfigs.default=t4"}},
		{`nodeConfigs.fallbackStrategies: "first"; want named, single or empty`, []string{"-f", nc, "--set", "nodeConfigs.fallbackStrategies={named,first}"}},
		{`nodeConfigs.configs.a100-mig.flags.migStrategy: "mixd"; want none, single or mixed`, []string{"-f", nc, "--set", "nodeConfigs.configs.a100-mig.flags.migStrategy=mixd"}},
		{"nodeConfigs.configs.bad key: not a ConfigMap key", []string{"--set-json", `nodeConfigs.configs={"bad key":{"version":"v1"}}`}},
		{"nodeConfigs.configs.t4: error converting YAML to JSON", []string{"--set-json", `nodeConfigs.configs={"t4":"version: [v1"}`}},
		{"config: this is a ConfigMap: pass one of its keys (a100, t4)", []string{"--set-json", `config={"apiVersion":"v1","kind":"ConfigMap","data":{"t4":"version: v1","a100":"version: v1"}}`}},
	} {
		refused(t, tc.want, tc.args...)
	}
}
