// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

const nodeNamePolicy = fullname + "-node-name"

// daemonSetController is the DaemonSet controller's user under
// kube-controller-manager's --use-service-account-credentials.
const daemonSetController = "system:serviceaccount:kube-system:daemon-set-controller"

// nodeNamePolicyObjects renders the policy and its binding with args.
func nodeNamePolicyObjects(t *testing.T, args ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	r := render(t, args...)
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", nodeNamePolicy, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", nodeNamePolicy, &vapb)
	return &vap, &vapb
}

// TestNodeNamePolicyTemplate: the policy comes where the node agent
// follows the scheduler's choices (scheduler.enabled, schedulerChoice),
// is on by default there and can be turned off; it allows the kubelet's
// group, the agent, the DaemonSet controller and
// scheduler.nodeNamePolicy.allowedUsers, and refuses a bad user name; its
// GPU resources are api/resource's.
func TestNodeNamePolicyTemplate(t *testing.T) {
	has := func(r rendered) bool { _, ok := r["ValidatingAdmissionPolicy/"+nodeNamePolicy]; return ok }
	for _, set := range []string{"schedulerChoice=true", "scheduler.enabled=true"} {
		if !has(render(t, "--set", set)) {
			t.Errorf("%s: no policy %s", set, nodeNamePolicy)
		}
	}
	for _, args := range [][]string{nil, {"--set", "labelNode=true"}, {"--set", "nodeAgent.kubeletAPI=dra"}, {"--set", "scheduler.enabled=true,scheduler.nodeNamePolicy.enabled=false"}} {
		if has(render(t, args...)) {
			t.Errorf("%v: policy %s rendered", args, nodeNamePolicy)
		}
	}
	vap, vapb := nodeNamePolicyObjects(t, "--set", "scheduler.enabled=true,scheduler.nodeNamePolicy.allowedUsers={system:serviceaccount:ops:burn-in,admin@example.com},scheduler.nodeNamePolicy.validationActions={Warn,Audit}")
	if vapb.Spec.PolicyName != vap.Name || !slices.Equal(vapb.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{"Warn", "Audit"}) {
		t.Errorf("binding %+v", vapb.Spec)
	}
	if vap.Spec.FailurePolicy == nil || *vap.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", vap.Spec.FailurePolicy)
	}
	for _, r := range vap.Spec.MatchConstraints.ResourceRules {
		if !slices.Equal(r.Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) || !slices.Equal(r.Resources, []string{"pods"}) {
			t.Errorf("rule %+v, want CREATE of pods alone", r)
		}
	}
	conds := map[string]string{}
	for _, c := range vap.Spec.MatchConditions {
		conds[c.Name] = c.Expression
	}
	users := "['" + strings.Join([]string{agentUser, daemonSetController, "system:serviceaccount:ops:burn-in", "admin@example.com"}, "', '") + "']"
	if want := "!('system:nodes' in request.userInfo.?groups.orValue([])) && !(request.userInfo.username in " + users + ")"; conds["not-allowed"] != want {
		t.Errorf("matchCondition not-allowed:\n got %s\nwant %s", conds["not-allowed"], want)
	}
	if conds["node-name-set"] == "" {
		t.Errorf("no matchCondition node-name-set: %v", conds)
	}
	vars := map[string]string{}
	for _, v := range vap.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	if want := "['" + gpuresource.NVIDIAPrefix + "']"; vars["gpuPrefixes"] != want {
		t.Errorf("gpuPrefixes %s, want %s", vars["gpuPrefixes"], want)
	}
	if want := "['" + gpuresource.GPUMilli + "']"; vars["gpuNames"] != want {
		t.Errorf("gpuNames %s, want %s", vars["gpuNames"], want)
	}

	out, err := exec.Command(helmBin(t), templateArgs("--set", "scheduler.enabled=true", "--set-json", `scheduler.nodeNamePolicy.allowedUsers=["a'b"]`)...).CombinedOutput()
	if want := `scheduler.nodeNamePolicy.allowedUsers: "a'b" is not a user name`; err == nil || !strings.Contains(string(out), want) {
		t.Errorf("a quote in a user name: %v %s, want %q", err, out, want)
	}
}

// TestNodeNamePolicyOnCluster applies the chart's policy to a real
// kube-apiserver and creates pods that name their node, as an ordinary
// user (alice, who may create pods), the cluster admin, a kubelet, the
// node agent's service account, the DaemonSet controller and an operator
// on scheduler.nodeNamePolicy.allowedUsers: those asking for GPUs (an
// nvidia.com/ resource in a container's limits or an init container's
// requests, gpuplane.io/gpu-milli, a ResourceClaim) are refused but for
// the allowed creators; pods without GPUs, or GPU pods without a node,
// are created by anyone.
func TestNodeNamePolicyOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	const operator = "system:serviceaccount:ops:burn-in"
	vap, vapb := nodeNamePolicyObjects(t, "--set", "scheduler.enabled=true,scheduler.nodeNamePolicy.allowedUsers={"+operator+"}")
	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	// Everyone authenticated may create pods: RBAC is not what is tested.
	must(t, create(ctx, admin, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "create-pods"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
	}))
	must(t, create(ctx, admin, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "create-pods"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "create-pods"},
		Subjects:   []rbacv1.Subject{{Kind: "Group", APIGroup: "rbac.authorization.k8s.io", Name: "system:authenticated"}},
	}))
	must(t, create(ctx, admin, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0"}}))
	must(t, create(ctx, admin, vap))
	must(t, create(ctx, admin, vapb))

	sa := []string{"system:serviceaccounts"}
	alice := as(t, c, "alice")
	kubelet := as(t, c, "system:node:n0", "system:nodes")
	agentc := as(t, c, agentUser, append(sa, "system:serviceaccounts:"+namespace)...)
	dsc := as(t, c, daemonSetController, append(sa, "system:serviceaccounts:kube-system")...)
	op := as(t, c, operator, append(sa, "system:serviceaccounts:ops")...)

	n := 0
	gpuPod := func(node string, edit func(*corev1.PodSpec)) *corev1.Pod {
		n++
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p" + strings.Repeat("x", n), Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{gpuresource.GPU: resource.MustParse("2")}},
			}}},
		}
		if edit != nil {
			edit(&p.Spec)
		}
		return p
	}
	// The API server loads policies in the background: wait until a
	// dry-run create of the bypass pod is refused.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := alice.CoreV1().Pods("default").Create(ctx, gpuPod("n0", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	refused := func(what string, err error, asked string) {
		t.Helper()
		want := "ValidatingAdmissionPolicy '" + nodeNamePolicy + "' with binding '" + nodeNamePolicy + "' denied request: a pod that asks for GPUs (" + asked + ") may not name its node (spec.nodeName n0) at creation"
		if err == nil {
			t.Errorf("%s: created, want refused", what)
		} else if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "scheduler.nodeNamePolicy.allowedUsers") {
			t.Errorf("%s: %v, want forbidden: %q", what, err, want)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want created", what, err)
		}
	}
	mk := func(cl kubernetes.Interface, p *corev1.Pod) error {
		_, err := cl.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	}

	// The bypass of issue 39, and its variants.
	refused("alice: nvidia.com/gpu 2 on n0", mk(alice, gpuPod("n0", nil)), gpuresource.GPU)
	refused("the admin: nvidia.com/gpu 2 on n0", mk(admin, gpuPod("n0", nil)), gpuresource.GPU)
	kubeSystem := gpuPod("n0", nil)
	kubeSystem.Namespace = "kube-system"
	refused("alice: nvidia.com/gpu 2 on n0 in kube-system", mk(alice, kubeSystem), gpuresource.GPU)
	refused("alice: a MIG device in an init container's requests", mk(alice, gpuPod("n0", func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{}
		q := resource.MustParse("1")
		s.InitContainers = []corev1.Container{{Name: "init", Image: "registry.k8s.io/pause:3.10", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceName(gpuresource.MIGResource("1g.10gb")): q}, Limits: corev1.ResourceList{corev1.ResourceName(gpuresource.MIGResource("1g.10gb")): q}}}}
	})), gpuresource.MIGResource("1g.10gb"))
	refused("alice: a restartable sidecar with a time-sliced GPU", mk(alice, gpuPod("n0", func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{}
		s.InitContainers = []corev1.Container{{Name: "side", Image: "registry.k8s.io/pause:3.10", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceName(gpuresource.GPU + gpuresource.SharedSuffix): resource.MustParse("1")}}}}
	})), gpuresource.GPU+gpuresource.SharedSuffix)
	refused("alice: gpuplane.io/gpu-milli 500", mk(alice, gpuPod("n0", func(s *corev1.PodSpec) {
		s.Containers[0].Resources.Limits = corev1.ResourceList{gpuresource.GPUMilli: resource.MustParse("500")}
	})), gpuresource.GPUMilli)
	refused("alice: a ResourceClaim", mk(alice, gpuPod("n0", func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{}
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	})), "resource claim gpu")

	// The allow list.
	mirror := gpuPod("n0", nil)
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
	allowed("a kubelet's mirror pod with nvidia.com/gpu on n0", mk(kubelet, mirror))
	allowed("the node agent: nvidia.com/gpu on n0", mk(agentc, gpuPod("n0", nil)))
	allowed("the DaemonSet controller: nvidia.com/gpu on n0", mk(dsc, gpuPod("n0", nil)))
	allowed("the operator on allowedUsers: nvidia.com/gpu on n0", mk(op, gpuPod("n0", nil)))

	// What is not matched.
	allowed("alice: nvidia.com/gpu, no node (gpuplane-scheduler places it)", mk(alice, gpuPod("", nil)))
	allowed("alice: a pod on n0 without GPUs", mk(alice, gpuPod("n0", func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), "example.com/nic": resource.MustParse("1")}}
	})))
	allowed("alice: a claim, no node", mk(alice, gpuPod("", func(s *corev1.PodSpec) {
		s.Containers[0].Resources = corev1.ResourceRequirements{}
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To("gpu-claim")}}
	})))
}
