// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// perNodeTerms is each node selector term of a DaemonSet's affinity,
// as "key op values" expressions joined by " && ".
func perNodeTerms(ds *appsv1.DaemonSet) []string {
	var out []string
	for _, term := range ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var e []string
		for _, x := range term.MatchExpressions {
			e = append(e, fmt.Sprintf("%s %s %v", x.Key, x.Operator, x.Values))
		}
		out = append(out, strings.Join(e, " && "))
	}
	return out
}

// TestTemplatePerNode: nodeAgent.perNode renders two DaemonSets, each on
// the nodes of its kubelet API: every term of the chart's affinity also
// asks gpuplane.io/kubelet-api In [its mode], or for kubeletAPI's mode (the
// unlabelled nodes') NotIn [the other]. Only the DRA one runs
// --kubelet-api=dra and mounts the API token; the DeviceClasses come too.
func TestTemplatePerNode(t *testing.T) {
	for _, def := range []string{"device-plugin", "dra"} {
		r := render(t, "--set", "nodeAgent.perNode=true", "--set", "nodeAgent.kubeletAPI="+def)
		if _, ok := r["DaemonSet/"+fullname]; ok {
			t.Errorf("%s: DaemonSet %s rendered beside the two", def, fullname)
		}
		for _, mode := range []string{"device-plugin", "dra"} {
			var ds appsv1.DaemonSet
			r.get(t, "DaemonSet", fullname+"-"+mode, &ds)
			sel := "gpuplane.io/kubelet-api In [" + mode + "]"
			if mode == def {
				other := map[string]string{"dra": "device-plugin", "device-plugin": "dra"}[mode]
				sel = "gpuplane.io/kubelet-api NotIn [" + other + "]"
			}
			want := []string{"feature.node.kubernetes.io/pci-10de.present In [true] && " + sel, "nvidia.com/gpu.present In [true] && " + sel}
			if got := perNodeTerms(&ds); !slices.Equal(got, want) {
				t.Errorf("%s default, %s: affinity %q, want %q", def, mode, got, want)
			}
			if l := ds.Spec.Selector.MatchLabels["gpuplane.io/kubelet-api"]; l != mode || ds.Spec.Template.Labels["gpuplane.io/kubelet-api"] != mode {
				t.Errorf("%s: selector %v", mode, ds.Spec.Selector.MatchLabels)
			}
			dra := slices.Contains(ds.Spec.Template.Spec.Containers[0].Args, "--kubelet-api=dra")
			if dra != (mode == "dra") || *ds.Spec.Template.Spec.AutomountServiceAccountToken != (mode == "dra") {
				t.Errorf("%s: --kubelet-api=dra %v, token %v", mode, dra, *ds.Spec.Template.Spec.AutomountServiceAccountToken)
			}
		}
		if _, ok := r["DeviceClass/gpu.nvidia.com"]; !ok {
			t.Errorf("%s: no DeviceClass gpu.nvidia.com", def)
		}
	}
}

// TestPerNodeOnCluster installs the chart with nodeAgent.perNode on a real
// API server whose kube-controller-manager runs the DaemonSet controller,
// over three kwok nodes labelled gpuplane.io/kubelet-api=dra,
// =device-plugin and not at all: the DaemonSet controller puts exactly one
// agent pod on each, of the DaemonSet of its label, the unlabelled node
// the default's (device-plugin). No node gets both.
func TestPerNodeOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	helmBin(t)
	c := kube.StartT(t, kube.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	nodes := []kube.Node{
		{Name: "n-dra", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 8, Model: "H100-80GB", Labels: map[string]string{"gpuplane.io/kubelet-api": "dra", "nvidia.com/gpu.present": "true"}},
		{Name: "n-dp", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 8, Model: "H100-80GB", Labels: map[string]string{"gpuplane.io/kubelet-api": "device-plugin", "nvidia.com/gpu.present": "true"}},
		{Name: "n-none", CPUMilli: 8000, MemoryMiB: 32768, GPUs: 8, Model: "H100-80GB", Labels: map[string]string{"nvidia.com/gpu.present": "true"}},
	}
	if err := c.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	out := helm(t, "install", release, chart, "--kubeconfig", c.Kubeconfig, "--namespace", namespace, "--create-namespace",
		"--set", "nodeAgent.perNode=true,backend=mock")
	if !strings.Contains(out, "STATUS: deployed") {
		t.Fatalf("helm install:\n%s", out)
	}
	want := map[string]string{"n-dra": fullname + "-dra", "n-dp": fullname + "-device-plugin", "n-none": fullname + "-device-plugin"}
	var got map[string][]string
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		got = map[string][]string{}
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && ref.Kind == "DaemonSet" {
				got[nodeOf(&p)] = append(got[nodeOf(&p)], ref.Name)
			}
		}
		for n, ds := range want {
			if !slices.Equal(got[n], []string{ds}) {
				return false, nil
			}
		}
		return len(got) == len(want), nil
	})
	if err != nil {
		t.Fatalf("agent pods by node %v, want one each: %v", got, want)
	}
}

// nodeOf is the node a DaemonSet pod is for: its node name, else the
// node its required affinity names (the DaemonSet controller's
// metadata.name field selector, before the scheduler binds it).
func nodeOf(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}
