// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

const agentWritePolicy = fullname + "-node-agent"

// TestAgentWritePolicyTemplate: the policy comes with the agent's write
// rights (labelNode, schedulerChoice, scheduler.enabled), can be turned
// off, matches the agent's service account alone, and keeps the keys the
// agent's code owns.
func TestAgentWritePolicyTemplate(t *testing.T) {
	has := func(r rendered) bool { _, ok := r["ValidatingAdmissionPolicy/"+agentWritePolicy]; return ok }
	for _, set := range []string{"labelNode=true", "schedulerChoice=true", "scheduler.enabled=true"} {
		if !has(render(t, "--set", set)) {
			t.Errorf("%s: no policy %s", set, agentWritePolicy)
		}
	}
	for _, args := range [][]string{nil, {"--set", "nodeFeatureAPI=true"}, {"--set", "labelNode=true,agentWritePolicy.enabled=false"}} {
		if has(render(t, args...)) {
			t.Errorf("%v: policy %s rendered", args, agentWritePolicy)
		}
	}
	r := render(t, "--set", "labelNode=true,agentWritePolicy.validationActions={Warn,Audit}")
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", agentWritePolicy, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", agentWritePolicy, &vapb)
	if vapb.Spec.PolicyName != vap.Name || !slices.Equal(vapb.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{"Warn", "Audit"}) {
		t.Errorf("binding %+v", vapb.Spec)
	}
	if len(vap.Spec.MatchConditions) != 1 || vap.Spec.MatchConditions[0].Expression != "request.userInfo.username == '"+agentUser+"'" {
		t.Errorf("matchConditions %+v, want the agent's user %s alone", vap.Spec.MatchConditions, agentUser)
	}
	vars := map[string]string{}
	for _, v := range vap.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	list := func(s ...string) string { return "['" + strings.Join(s, "', '") + "']" }
	for name, want := range map[string]string{
		"podAnnotations":    list(gpuresource.AnnotationAllocated),
		"nodeAnnotations":   list(gpuresource.AnnotationNodeGPUUUIDs, gpuresource.AnnotationNodeUnhealthyGPUs, gpuresource.AnnotationNodeUnplacedPods),
		"nodeLabelPrefixes": list(labels.Prefixes...),
		"nodeLabelForeign":  list(labels.Foreign...),
	} {
		if vars[name] != want {
			t.Errorf("variable %s = %s, want %s", name, vars[name], want)
		}
	}
}

// TestAgentWritePolicyOnCluster applies the chart's node agent RBAC and
// write policy to a real kube-apiserver and checks, as the agent's
// service account with the node-name claim of a pod on n0 (as the
// kubelet's projected token carries it), that the agent's own calls pass
// (labels.ApplyToNode on n0, Assignments.Take of a pod bound to n0) and
// that what its RBAC still allows beyond them is refused: another node,
// another node's pods, a cordon, a foreign label, a pod's image, labels or
// other annotations, and any write without the claim.
func TestAgentWritePolicyOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	r := render(t, "--set", "labelNode=true,schedulerChoice=true")
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", agentWritePolicy, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", agentWritePolicy, &vapb)

	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{})
	must(t, err)
	installAgentRBAC(t, ctx, admin, r)
	// The agent's token: with the node-name claim of its pod on node, or
	// without one ("").
	agentOn := func(node string) kubernetes.Interface {
		cfg := rest.CopyConfig(c.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: agentUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}}
		if node != "" {
			cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
		}
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		return cs
	}
	agentN0, noClaim := agentOn("n0"), agentOn("")
	for _, n := range []string{"n0", "n1"} {
		must(t, create(ctx, admin, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"nvidia.com/gpu.deploy.driver": "true"}}}))
	}
	gpuPod := func(name, node string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name},
				Annotations: map[string]string{gpuresource.AnnotationGPUs: "0", gpuresource.AnnotationGPUShare: "1000"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
			}}},
		}
	}
	must(t, create(ctx, admin, gpuPod("on-n0", "n0")))
	must(t, create(ctx, admin, gpuPod("on-n1", "n1")))

	must(t, create(ctx, admin, &vap))
	must(t, create(ctx, admin, &vapb))
	patchNode := func(c kubernetes.Interface, node string, patch map[string]any, dry bool) error {
		b, err := json.Marshal(patch)
		must(t, err)
		o := metav1.PatchOptions{}
		if dry {
			o.DryRun = []string{metav1.DryRunAll}
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, b, o)
		return err
	}
	patchPod := func(c kubernetes.Interface, pod string, patch map[string]any) error {
		b, err := json.Marshal(patch)
		must(t, err)
		// Strategic: containers merge by name, so an image alone changes.
		_, err = c.CoreV1().Pods("default").Patch(ctx, pod, types.StrategicMergePatchType, b, metav1.PatchOptions{})
		return err
	}
	meta := func(k string, v map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{k: v}}
	}
	// The API server loads policies in the background: wait until the
	// agent on n0 may no longer label n1 (dry run).
	deadline := time.Now().Add(time.Minute)
	for patchNode(agentN0, "n1", meta("labels", map[string]any{"nvidia.com/gpu.count": "1"}), true) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	refused := func(what string, err error, msg string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: allowed, want refused", what)
		} else if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+agentWritePolicy+"'") || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want the policy's %q", what, err, msg)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		}
	}

	// The agent's own calls on its node.
	l := map[string]string{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "8", "gpuplane.io/gpu.model": "H100-80GB"}
	allowed("labels.ApplyToNode n0 from n0", labels.ApplyToNode(ctx, agentN0, "n0", l, map[string]string{gpuresource.AnnotationNodeGPUUUIDs: "GPU-0"}))
	// A MIG profile gone: ApplyToNode removes its labels.
	delete(l, "gpuplane.io/gpu.model")
	allowed("labels.ApplyToNode n0 removing a label", labels.ApplyToNode(ctx, agentN0, "n0", l, nil))
	allowed("labels.ApplyUnhealthy n0 from n0", labels.ApplyUnhealthy(ctx, agentN0, "n0", []int{3}))
	allowed("labels.ApplyUnhealthy n0 clearing", labels.ApplyUnhealthy(ctx, agentN0, "n0", nil))
	allowed("labels.ApplyUnplaced n0 from n0", labels.ApplyUnplaced(ctx, agentN0, "n0", gpuresource.UnplacedPods{"default/bypass": {"5": 1000, "6": 1000}}))
	allowed("labels.ApplyUnplaced n0 clearing", labels.ApplyUnplaced(ctx, agentN0, "n0", nil))
	took, err := deviceplugin.NewAssignments(agentN0, "n0").Take(ctx, "nvidia.com/gpu", 1, func(deviceplugin.Choice) error { return nil })
	if err != nil || !took {
		t.Errorf("Assignments.Take on n0 from n0: %v, %v; want the pod on n0 taken", took, err)
	}
	if p, err := admin.CoreV1().Pods("default").Get(ctx, "on-n0", metav1.GetOptions{}); err != nil || p.Annotations[gpuresource.AnnotationAllocated] != "true" {
		t.Errorf("on-n0 after Take: %v, annotations %v", err, p.Annotations)
	}

	// What its RBAC allows beyond them.
	own := "changes only its own Node, not n1"
	refused("labels.ApplyToNode n1 from n0", labels.ApplyToNode(ctx, agentN0, "n1", l, nil), own)
	refused("labels.ApplyUnhealthy n1 from n0", labels.ApplyUnhealthy(ctx, agentN0, "n1", []int{0}), own)
	refused("labels.ApplyUnplaced n1 from n0", labels.ApplyUnplaced(ctx, agentN0, "n1", gpuresource.UnplacedPods{}), own)
	refused("taint n1 from n0", patchNode(agentN0, "n1", map[string]any{"spec": map[string]any{"taints": []map[string]any{{"key": "x", "effect": "NoSchedule"}}}}, false), own)
	nodeOnly := "changes on its Node only the labels under"
	refused("cordon n0 from n0", patchNode(agentN0, "n0", map[string]any{"spec": map[string]any{"unschedulable": true}}, false), nodeOnly)
	refused("label n0 team=x from n0", patchNode(agentN0, "n0", meta("labels", map[string]any{"team": "x"}), false), nodeOnly)
	refused("GPU operator's label on n0 from n0", patchNode(agentN0, "n0", meta("labels", map[string]any{"nvidia.com/gpu.deploy.driver": nil}), false), nodeOnly)
	refused("other annotation on n0 from n0", patchNode(agentN0, "n0", meta("annotations", map[string]any{"x": "y"}), false), nodeOnly)
	refused("labels.ApplyToNode n0 without the node claim", labels.ApplyToNode(ctx, noClaim, "n0", map[string]string{"nvidia.com/gpu.count": "4"}, nil), "(none: a token without the node-name claim)")

	podOnly := "changes on a pod only the annotation gpuplane.io/allocated"
	refused("allocated on a pod of n1 from n0", patchPod(agentN0, "on-n1", meta("annotations", map[string]any{gpuresource.AnnotationAllocated: "true"})), "changes only the pods bound to that node")
	refused("image of a pod of n1 from n0", patchPod(agentN0, "on-n1", map[string]any{"spec": map[string]any{"containers": []map[string]any{{"name": "main", "image": "evil"}}}}), "changes only the pods bound to that node")
	refused("image of a pod of n0 from n0", patchPod(agentN0, "on-n0", map[string]any{"spec": map[string]any{"containers": []map[string]any{{"name": "main", "image": "evil"}}}}), podOnly)
	refused("label of a pod of n0 from n0", patchPod(agentN0, "on-n0", meta("labels", map[string]any{"app": "other"})), podOnly)
	refused("GPU choice of a pod of n0 from n0", patchPod(agentN0, "on-n0", meta("annotations", map[string]any{gpuresource.AnnotationGPUs: "1"})), podOnly)
	refused("allocated without the node claim", patchPod(noClaim, "on-n1", meta("annotations", map[string]any{gpuresource.AnnotationAllocated: "true"})), "(none: a token without the node-name claim)")

	// Nobody else is matched.
	allowed("the admin taints n1", patchNode(admin, "n1", map[string]any{"spec": map[string]any{"taints": []map[string]any{{"key": "x", "effect": "NoSchedule"}}}}, false))
	allowed("the admin relabels on-n1", patchPod(admin, "on-n1", meta("labels", map[string]any{"app": "other"})))
}
