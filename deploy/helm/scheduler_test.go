// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

const schedulerName = fullname + "-scheduler"

// schedulerConfig returns the KubeSchedulerConfiguration in the chart's
// ConfigMap, as a generic map.
func schedulerConfig(t *testing.T, r rendered) map[string]any {
	t.Helper()
	var cm corev1.ConfigMap
	r.get(t, "ConfigMap", schedulerName, &cm)
	var conf map[string]any
	if err := yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), &conf); err != nil {
		t.Fatalf("config.yaml: %v\n%s", err, cm.Data["config.yaml"])
	}
	return conf
}

// TestSchedulerTemplate: with scheduler.enabled the chart adds the
// scheduler's Deployment, its configuration (deploy/scheduler/config.yaml
// with the Lease in the release namespace) and its RBAC.
func TestSchedulerTemplate(t *testing.T) {
	if keys := render(t).keys(); slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "scheduler") }) {
		t.Errorf("scheduler objects without scheduler.enabled: %v", keys)
	}
	r := render(t, "--set", "scheduler.enabled=true")
	for _, k := range []string{
		"ConfigMap/" + schedulerName, "Deployment/" + schedulerName, "ServiceAccount/" + schedulerName,
		"ClusterRoleBinding/" + schedulerName + "-kube-scheduler", "ClusterRoleBinding/" + schedulerName + "-volume-scheduler",
		"Role/" + schedulerName, "RoleBinding/" + schedulerName, "RoleBinding/" + schedulerName + "-auth-reader",
	} {
		if _, ok := r[k]; !ok {
			t.Errorf("no %s; have %v", k, r.keys())
		}
	}

	// The ConfigMap is the shipped configuration, but for the Lease.
	b, err := os.ReadFile("../scheduler/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var shipped map[string]any
	if err := yaml.UnmarshalStrict(b, &shipped); err != nil {
		t.Fatal(err)
	}
	shipped["leaderElection"] = map[string]any{"leaderElect": true, "resourceNamespace": namespace, "resourceName": schedulerName}
	if got := schedulerConfig(t, r); !reflect.DeepEqual(got, shipped) {
		gb, _ := yaml.Marshal(got)
		sb, _ := yaml.Marshal(shipped)
		t.Errorf("chart configuration differs from deploy/scheduler/config.yaml:\n%s\nwant\n%s", gb, sb)
	}

	var d appsv1.Deployment
	r.get(t, "Deployment", schedulerName, &d)
	c := d.Spec.Template.Spec.Containers[0]
	if want := []string{"--config=/etc/gpuplane-scheduler/config.yaml", "--secure-port=10259", "--feature-gates=GenericWorkload=true", "-v=2"}; !slices.Equal(c.Args, want) {
		t.Errorf("args %v, want %v", c.Args, want)
	}
	if d.Spec.Template.Spec.ServiceAccountName != schedulerName {
		t.Errorf("service account %q", d.Spec.Template.Spec.ServiceAccountName)
	}
	// The node agent's DaemonSet must not select the scheduler's pods, and
	// gets the API access its Allocate needs to follow the scheduler.
	ds, ac := agent(t, r)
	if !slices.Contains(ac.Args, "--label-node") || !slices.Contains(ac.Args, "--scheduler-choice") {
		t.Errorf("scheduler.enabled: node agent args %v lack --label-node or --scheduler-choice", ac.Args)
	}
	if _, ok := r["ClusterRole/"+fullname]; !ok {
		t.Errorf("scheduler.enabled: no ClusterRole for the node agent")
	}
	if matches(ds.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("DaemonSet selector %v matches the scheduler's pods %v", ds.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}
	if !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("Deployment selector %v does not match its pods %v", d.Spec.Selector.MatchLabels, d.Spec.Template.Labels)
	}

	r = render(t, "--set", "scheduler.enabled=true,scheduler.policy=bestfit,scheduler.tieBreak=first,scheduler.featureGates=")
	args := schedulerConfig(t, r)["profiles"].([]any)[0].(map[string]any)["pluginConfig"].([]any)[0].(map[string]any)["args"]
	if want := map[string]any{"policy": "bestfit", "tieBreak": "first"}; !reflect.DeepEqual(args, want) {
		t.Errorf("GPUPlacement args %v, want %v", args, want)
	}
	r.get(t, "Deployment", schedulerName, &d)
	if slices.ContainsFunc(d.Spec.Template.Spec.Containers[0].Args, func(a string) bool { return strings.HasPrefix(a, "--feature-gates") }) {
		t.Errorf("featureGates empty, args %v", d.Spec.Template.Spec.Containers[0].Args)
	}
}

// TestSchedulerRBACOnCluster installs the chart's scheduler RBAC and
// configuration on a real kube-apiserver and runs gpuplane-scheduler as
// the chart's service account (a token from the TokenRequest API): with
// only those permissions it takes its Lease, schedules a GPU pod and
// writes the chosen GPU on it.
func TestSchedulerRBACOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gpuplane-scheduler and starts a control plane")
	}
	r := render(t, "--set", "scheduler.enabled=true,scheduler.policy=bestfit,scheduler.tieBreak=first")
	c := kube.StartT(t, kube.Options{FeatureGates: kube.WorkloadFeatureGates, RuntimeConfig: kube.WorkloadRuntimeConfig})
	ctx := t.Context()
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var sa corev1.ServiceAccount
	r.get(t, "ServiceAccount", schedulerName, &sa)
	if _, err := c.Client.CoreV1().ServiceAccounts(namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, k := range r.keys() {
		if !strings.Contains(k, schedulerName) {
			continue
		}
		kind, name, _ := strings.Cut(k, "/")
		var err error
		switch kind {
		case "ClusterRole":
			var o rbacv1.ClusterRole
			r.get(t, kind, name, &o)
			_, err = c.Client.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
		case "ClusterRoleBinding":
			var o rbacv1.ClusterRoleBinding
			r.get(t, kind, name, &o)
			_, err = c.Client.RbacV1().ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
		case "Role":
			var o rbacv1.Role
			r.get(t, kind, name, &o)
			_, err = c.Client.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			r.get(t, kind, name, &o)
			_, err = c.Client.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
	}
	tok, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, schedulerName, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	err = clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: c.URL, CertificateAuthorityData: c.Config.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"sa": {Token: tok.Status.Token}},
		Contexts:       map[string]*clientcmdapi.Context{"c": {Cluster: "c", AuthInfo: "sa"}},
		CurrentContext: "c",
	}, kc)
	if err != nil {
		t.Fatal(err)
	}
	conf := schedulerConfig(t, r)
	conf["clientConnection"] = map[string]any{"kubeconfig": kc}
	b, err := yaml.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}

	if err := c.CreateNodes(ctx, []kube.Node{{Name: "n0", CPUMilli: 8000, MemoryMiB: 32 << 10, GPUs: 4, Model: "T4"}}); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitNodesReady(ctx, []string{"n0"}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "gpuplane-scheduler")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpuplane/gpuplane/cmd/gpuplane-scheduler").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg, "--secure-port=0", "--feature-gates=GenericWorkload=true")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("scheduler log:\n%s", b)
		}
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"},
		Spec: corev1.PodSpec{
			SchedulerName: "gpuplane",
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), gpuresource.GPUMilli: resource.MustParse("250")},
				Limits:   corev1.ResourceList{gpuresource.GPUMilli: resource.MustParse("250")},
			}}},
		},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(2 * time.Minute)
	for {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// Best-fit on an empty node: the first GPU.
		if p.Spec.NodeName == "n0" && p.Annotations["gpuplane.io/gpus"] == "0" && p.Annotations["gpuplane.io/gpu-share"] == "250" {
			break
		}
		select {
		case <-exited:
			t.Fatalf("scheduler exited: %v", cmd.ProcessState)
		case <-deadline:
			t.Fatalf("pod not scheduled after 2 minutes: node %q, annotations %v", p.Spec.NodeName, p.Annotations)
		case <-time.After(50 * time.Millisecond):
		}
	}
	lease, err := c.Client.CoordinationV1().Leases(namespace).Get(ctx, schedulerName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the scheduler's Lease: %v", err)
	}
	if h := lease.Spec.HolderIdentity; h == nil || *h == "" {
		t.Errorf("Lease %s has no holder", schedulerName)
	}
}
