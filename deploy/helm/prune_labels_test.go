// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"maps"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// pruneName is the uninstall hook's objects' name: fullname-prune-labels.
const pruneName = fullname + "-prune-labels"

// TestTemplatePruneLabels: where the agent labels Nodes, helm uninstall
// runs a post-delete hook Job, gpuplane-node-agent --prune-labels, as
// node-feature-discovery's chart runs nfd-master -prune
// (kubernetes-sigs/node-feature-discovery,
// deployment/helm/node-feature-discovery/templates/post-delete-job.yaml:
// hook post-delete, hook-delete-policy before-hook-creation,hook-succeeded,
// a ServiceAccount, ClusterRole and binding of its own). Its RBAC is
// created first (weight -1 before the Job's 0), grants get, list and
// patch on nodes alone, and binds the Job's own service account; the pod
// runs the chart's image on nodeSelector and tolerations, in the node's
// network with the API server's address where those are set, and carries
// labels the agent's DaemonSet selector does not match.
func TestTemplatePruneLabels(t *testing.T) {
	r := render(t, "--set", "labelNode=true,hostNetwork=true,kubernetesServiceHost=127.0.0.1,kubernetesServicePort=6443,nodeSelector.pool=gpu")
	hook := func(kind string, meta map[string]string, weight string) {
		t.Helper()
		want := map[string]string{"helm.sh/hook": "post-delete", "helm.sh/hook-weight": weight,
			"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded"}
		if !maps.Equal(meta, want) {
			t.Errorf("%s annotations %v, want %v", kind, meta, want)
		}
	}
	var sa corev1.ServiceAccount
	var role rbacv1.ClusterRole
	var binding rbacv1.ClusterRoleBinding
	var job batchv1.Job
	r.get(t, "ServiceAccount", pruneName, &sa)
	r.get(t, "ClusterRole", pruneName, &role)
	r.get(t, "ClusterRoleBinding", pruneName, &binding)
	r.get(t, "Job", pruneName, &job)
	hook("ServiceAccount", sa.Annotations, "-1")
	hook("ClusterRole", role.Annotations, "-1")
	hook("ClusterRoleBinding", binding.Annotations, "-1")
	hook("Job", job.Annotations, "0")
	wantRules := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch"}}}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, wantRules[0].Verbs) || !slices.Equal(role.Rules[0].Resources, wantRules[0].Resources) || !slices.Equal(role.Rules[0].APIGroups, wantRules[0].APIGroups) {
		t.Errorf("rules %+v, want %+v", role.Rules, wantRules)
	}
	wantSubject := rbacv1.Subject{Kind: "ServiceAccount", Name: pruneName, Namespace: namespace}
	if binding.RoleRef.Name != pruneName || binding.RoleRef.Kind != "ClusterRole" || len(binding.Subjects) != 1 || binding.Subjects[0] != wantSubject {
		t.Errorf("binding %+v %+v", binding.RoleRef, binding.Subjects)
	}

	s := job.Spec.Template.Spec
	c := s.Containers[0]
	if s.ServiceAccountName != pruneName || s.RestartPolicy != corev1.RestartPolicyNever || !s.HostNetwork ||
		s.DNSPolicy != corev1.DNSClusterFirstWithHostNet || s.NodeSelector["pool"] != "gpu" || len(s.Tolerations) != 1 || s.Tolerations[0].Key != "nvidia.com/gpu" {
		t.Errorf("pod spec %+v", s)
	}
	if c.Image != "ghcr.io/gpuplane/gpuplane:"+appVersion(t) || !slices.Equal(c.Command, []string{"gpuplane-node-agent"}) || !slices.Equal(c.Args, []string{"--prune-labels"}) ||
		envValue(c, "KUBERNETES_SERVICE_HOST") != "127.0.0.1" || envValue(c, "KUBERNETES_SERVICE_PORT") != "6443" {
		t.Errorf("container %s %v %v env %v", c.Image, c.Command, c.Args, c.Env)
	}
	if sc := c.SecurityContext; sc == nil || *sc.Privileged || *sc.AllowPrivilegeEscalation || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("securityContext %+v", sc)
	}
	ds, _ := agent(t, r)
	if matches(ds.Spec.Selector.MatchLabels, job.Spec.Template.Labels) {
		t.Errorf("the DaemonSet's selector %v matches the Job's pod %v", ds.Spec.Selector.MatchLabels, job.Spec.Template.Labels)
	}
}

// TestTemplatePruneLabelsOff: no hook where the agent labels no Node
// (the defaults) or where nodeAgent.pruneLabelsOnUninstall is false; the
// scheduler turns labelling, and so the hook, on.
func TestTemplatePruneLabelsOff(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--set", "labelNode=true,nodeAgent.pruneLabelsOnUninstall=false"}, false},
		{[]string{"--set", "scheduler.enabled=true"}, true},
	} {
		_, ok := render(t, c.args...)["Job/"+pruneName]
		if ok != c.want {
			t.Errorf("%v: Job rendered %v, want %v", c.args, ok, c.want)
		}
	}
}
