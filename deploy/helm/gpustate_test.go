// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package helm_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

const gpuStatePolicy = fullname + "-gpu-state"

// The identities the policy lets write, as the chart names its service
// accounts in the release namespace.
const (
	schedulerUser = "system:serviceaccount:" + namespace + ":" + schedulerName
	agentUser     = "system:serviceaccount:" + namespace + ":" + fullname
)

// gpuStatePolicyObjects renders the chart's ValidatingAdmissionPolicy and
// its binding with scheduler.enabled.
func gpuStatePolicyObjects(t *testing.T, args ...string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	r := render(t, append([]string{"--set", "scheduler.enabled=true"}, args...)...)
	var vap admissionregistrationv1.ValidatingAdmissionPolicy
	var vapb admissionregistrationv1.ValidatingAdmissionPolicyBinding
	r.get(t, "ValidatingAdmissionPolicy", gpuStatePolicy, &vap)
	r.get(t, "ValidatingAdmissionPolicyBinding", gpuStatePolicy, &vapb)
	return &vap, &vapb
}

// TestGPUStatePolicyTemplate: the policy comes with the scheduler (and can
// be turned off), names the chart's service accounts, and protects exactly
// the keys that api/config/v1 and the node agent's labels package own.
func TestGPUStatePolicyTemplate(t *testing.T) {
	if keys := render(t).keys(); slices.ContainsFunc(keys, func(k string) bool { return strings.Contains(k, "ValidatingAdmissionPolicy") }) {
		t.Errorf("a policy without scheduler.enabled: %v", keys)
	}
	if keys := render(t, "--set", "scheduler.enabled=true,scheduler.gpuStatePolicy.enabled=false").keys(); slices.ContainsFunc(keys, func(k string) bool { return strings.HasSuffix(k, "/"+gpuStatePolicy) }) {
		t.Errorf("a policy with scheduler.gpuStatePolicy.enabled=false: %v", keys)
	}
	vap, vapb := gpuStatePolicyObjects(t, "--set", "scheduler.gpuStatePolicy.nodeWriters[0]=system:serviceaccount:nfd:nfd-master")
	if vapb.Spec.PolicyName != vap.Name || !slices.Equal(vapb.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %+v", vapb.Spec)
	}
	if vap.Spec.FailurePolicy == nil || *vap.Spec.FailurePolicy != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v, want Fail", vap.Spec.FailurePolicy)
	}
	vars := map[string]string{}
	for _, v := range vap.Spec.Variables {
		vars[v.Name] = v.Expression
	}
	list := func(s ...string) string { return "['" + strings.Join(s, "', '") + "']" }
	for name, want := range map[string]string{
		"scheduler":         "'" + schedulerUser + "'",
		"nodeWriters":       list(agentUser, "system:serviceaccount:nfd:nfd-master"),
		"schedulerKeys":     list(resource.AnnotationGPUs, resource.AnnotationGPUShare, resource.AnnotationGPUUUIDs),
		"agentPodKeys":      list(resource.AnnotationAllocated),
		"nodeAnnotations":   list(resource.AnnotationNodeGPUUUIDs, resource.AnnotationNodeUnhealthyGPUs, resource.AnnotationNodeUnplacedPods),
		"nodeLabelPrefixes": list(labels.Prefixes...),
		"nodeLabelForeign":  list(labels.Foreign...),
	} {
		if vars[name] != want {
			t.Errorf("variable %s = %s, want %s", name, vars[name], want)
		}
	}
	// Every operation but DELETE (and CONNECT): the garbage collector and
	// node drains are never in the way.
	for _, r := range vap.Spec.MatchConstraints.ResourceRules {
		if slices.Contains(r.Operations, admissionregistrationv1.Delete) || slices.Contains(r.Operations, admissionregistrationv1.OperationAll) {
			t.Errorf("rule %+v matches DELETE", r)
		}
	}
	r := render(t, "--set", "scheduler.enabled=true,scheduler.gpuStatePolicy.validationActions={Warn,Audit}")
	r.get(t, "ValidatingAdmissionPolicyBinding", gpuStatePolicy, vapb)
	if want := []admissionregistrationv1.ValidationAction{"Warn", "Audit"}; !slices.Equal(vapb.Spec.ValidationActions, want) {
		t.Errorf("validationActions %v, want %v", vapb.Spec.ValidationActions, want)
	}
}

// TestGPUStatePolicyOnCluster applies the chart's policy to a real
// kube-apiserver v1.37.2 and checks, as an ordinary user (alice, who may
// create, patch and bind pods in default), as the cluster admin, as the
// chart's scheduler and node agent service accounts and as the garbage
// collector, who may write which GPU state.
func TestGPUStatePolicyOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	vap, vapb := gpuStatePolicyObjects(t)
	msg := map[string]string{}
	for _, v := range vap.Spec.Validations {
		switch {
		case strings.Contains(v.Message, "a binding carrying"):
			msg["binding"] = v.Message
		case strings.Contains(v.Message, "gpuplane.io/allocated"):
			msg["allocated"] = v.Message
		case strings.Contains(v.Message, "the node annotation"):
			msg["node"] = v.Message
		default:
			msg["gpus"] = v.Message
		}
	}
	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client

	// RBAC: alice may do what a namespace's developer does with pods; the
	// service accounts get what the chart gives them.
	must(t, create(ctx, admin, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: "default"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "create", "update", "patch", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/binding", "bindings"}, Verbs: []string{"create"}},
		},
	}))
	must(t, create(ctx, admin, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice", Namespace: "default"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pods"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "alice"}},
	}))
	r := render(t, "--set", "scheduler.enabled=true")
	for _, name := range []string{schedulerName + "-kube-scheduler", fullname} {
		var crb rbacv1.ClusterRoleBinding
		r.get(t, "ClusterRoleBinding", name, &crb)
		must(t, create(ctx, admin, &crb))
	}
	var cr rbacv1.ClusterRole
	r.get(t, "ClusterRole", fullname, &cr)
	must(t, create(ctx, admin, &cr))

	alice := as(t, c, "alice")
	sched := as(t, c, schedulerUser, "system:serviceaccounts", "system:serviceaccounts:"+namespace)
	agentc := as(t, c, agentUser, "system:serviceaccounts", "system:serviceaccounts:"+namespace)
	// The node agent's token as its pods on n0 and n1 hold it: bound
	// tokens carry the pod's node.
	onNode := func(node string) kubernetes.Interface {
		cfg := rest.CopyConfig(c.Config)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: agentUser, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			Extra: map[string][]string{"authentication.kubernetes.io/node-name": {node}}}
		cs, err := kubernetes.NewForConfig(cfg)
		must(t, err)
		return cs
	}
	agentN0, agentN1 := onNode("n0"), onNode("n1")
	gc := as(t, c, "system:serviceaccount:kube-system:generic-garbage-collector", "system:serviceaccounts", "system:serviceaccounts:kube-system")

	// Pods and a node made before the policy: p bound by the scheduler
	// later, n0 labelled as the node agent labels it.
	must(t, create(ctx, alice, pod("p", nil)))
	must(t, create(ctx, admin, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n0",
		Labels:      map[string]string{"nvidia.com/gpu.product": "Tesla-T4", "nvidia.com/gpu.count": "8"},
		Annotations: map[string]string{resource.AnnotationNodeGPUUUIDs: "GPU-0,GPU-1,GPU-2,GPU-3,GPU-4,GPU-5,GPU-6,GPU-7"}}}))

	must(t, create(ctx, admin, vap))
	must(t, create(ctx, admin, vapb))
	// The API server loads policies in the background: wait until a
	// dry-run create of a pod claiming GPU 0 is refused.
	deadline := time.Now().Add(time.Minute)
	for {
		_, err := alice.CoreV1().Pods("default").Create(ctx, pod("wait", map[string]string{resource.AnnotationGPUs: "0"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy was not in force after a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}

	refused := func(what, key string, err error) {
		t.Helper()
		want := "ValidatingAdmissionPolicy '" + gpuStatePolicy + "' with binding '" + gpuStatePolicy + "' denied request: " + msg[key]
		if err == nil {
			t.Errorf("%s: allowed, want refused", what)
		} else if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v, want allowed", what, err)
		}
	}
	mergeAnn := func(k string, v any) []byte {
		b := fmt.Sprintf(`{"metadata":{"annotations":{%q:%s}}}`, k, jsonValue(v))
		return []byte(b)
	}
	patchPod := func(c kubernetes.Interface, name string, body []byte) error {
		_, err := c.CoreV1().Pods("default").Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
	patchNode := func(c kubernetes.Interface, body string) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, "n0", types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	bind := func(c kubernetes.Interface, name string, ann map[string]string) error {
		return c.CoreV1().Pods("default").Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
			Target:     corev1.ObjectReference{Kind: "Node", Name: "n0"},
		}, metav1.CreateOptions{})
	}
	choice := map[string]string{resource.AnnotationGPUs: "0", resource.AnnotationGPUShare: "1000", resource.AnnotationGPUUUIDs: "GPU-0"}

	// Creating a pod that claims GPUs.
	_, err := alice.CoreV1().Pods("default").Create(ctx, pod("forged", map[string]string{resource.AnnotationGPUs: "0"}), metav1.CreateOptions{})
	refused("alice creates a pod with gpuplane.io/gpus", "gpus", err)
	_, err = alice.CoreV1().Pods("default").Create(ctx, pod("forged2", map[string]string{resource.AnnotationGPUShare: "1"}), metav1.CreateOptions{})
	refused("alice creates a pod with gpuplane.io/gpu-share", "gpus", err)
	_, err = alice.CoreV1().Pods("default").Create(ctx, pod("forged3", map[string]string{resource.AnnotationAllocated: "true"}), metav1.CreateOptions{})
	refused("alice creates a pod with gpuplane.io/allocated", "allocated", err)
	_, err = alice.CoreV1().Pods("default").Create(ctx, pod("q", map[string]string{"team": "a"}), metav1.CreateOptions{})
	allowed("alice creates a pod with another annotation", err)

	// Binding with the GPUs: the scheduler's write.
	refused("alice binds q with GPUs", "binding", bind(alice, "q", choice))
	legacy := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default", Annotations: choice}, Target: corev1.ObjectReference{Kind: "Node", Name: "n0"}}
	refused("alice binds q with GPUs through the bindings resource", "binding",
		alice.CoreV1().RESTClient().Post().Namespace("default").Resource("bindings").Body(legacy).Do(ctx).Error())
	allowed("alice binds q without GPUs (as kube-scheduler binds)", bind(alice, "q", map[string]string{"example.com/by": "alice"}))
	allowed("the scheduler binds p with GPU 0", bind(sched, "p", choice))
	p, err := admin.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	must(t, err)
	if p.Spec.NodeName != "n0" || p.Annotations[resource.AnnotationGPUs] != "0" || p.Annotations[resource.AnnotationGPUShare] != "1000" {
		t.Fatalf("p after the binding: node %q, annotations %v", p.Spec.NodeName, p.Annotations)
	}

	// The finding: changing a bound pod's GPUs.
	refused("alice patches p's gpuplane.io/gpus to 7", "gpus", patchPod(alice, "p", mergeAnn(resource.AnnotationGPUs, "7")))
	refused("alice removes p's gpuplane.io/gpus", "gpus", patchPod(alice, "p", mergeAnn(resource.AnnotationGPUs, nil)))
	refused("alice patches p's gpuplane.io/gpu-uuids", "gpus", patchPod(alice, "p", mergeAnn(resource.AnnotationGPUUUIDs, "GPU-7")))
	refused("the admin patches p's gpuplane.io/gpus to 7", "gpus", patchPod(admin, "p", mergeAnn(resource.AnnotationGPUs, "7")))
	refused("the node agent patches p's gpuplane.io/gpus to 7", "gpus", patchPod(agentc, "p", mergeAnn(resource.AnnotationGPUs, "7")))
	p.Annotations[resource.AnnotationGPUs] = "7"
	_, err = admin.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	refused("the admin changes p's gpuplane.io/gpus through pods/status", "gpus", err)
	allowed("alice adds another annotation to p", patchPod(alice, "p", mergeAnn("team", "b")))
	allowed("alice changes a label of p", patchPod(alice, "p", []byte(`{"metadata":{"labels":{"app":"x"}}}`)))

	// The node agent's mark.
	refused("alice marks p allocated", "allocated", patchPod(alice, "p", mergeAnn(resource.AnnotationAllocated, "true")))
	refused("the node agent on n1 marks p (on n0) allocated", "allocated", patchPod(agentN1, "p", mergeAnn(resource.AnnotationAllocated, "true")))
	allowed("the node agent on n0 marks p allocated", patchPod(agentN0, "p", mergeAnn(resource.AnnotationAllocated, "true")))
	allowed("the node agent (a token without a node) unmarks p", patchPod(agentc, "p", mergeAnn(resource.AnnotationAllocated, nil)))

	// The node agent's node labels and annotation.
	refused("the admin relabels n0's product", "node", patchNode(admin, `{"metadata":{"labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3"}}}`))
	refused("the admin removes n0's GPU count label", "node", patchNode(admin, `{"metadata":{"labels":{"nvidia.com/gpu.count":null}}}`))
	// The GPU operator's and MIG manager's labels stay the administrator's.
	allowed("the admin asks the MIG manager for a layout on n0", patchNode(admin, `{"metadata":{"labels":{"nvidia.com/mig.config":"all-1g.10gb","nvidia.com/gpu.deploy.device-plugin":"false"}}}`))
	refused("the admin adds a gpuplane.io/ label to n0", "node", patchNode(admin, `{"metadata":{"labels":{"gpuplane.io/gpu.model":"H100-80GB"}}}`))
	refused("the admin reorders n0's GPU UUIDs", "node", patchNode(admin, `{"metadata":{"annotations":{"gpuplane.io/gpu-uuids":"GPU-7,GPU-1,GPU-2,GPU-3,GPU-4,GPU-5,GPU-6,GPU-0"}}}`))
	refused("the admin marks n0's GPU 0 unhealthy", "node", patchNode(admin, `{"metadata":{"annotations":{"gpuplane.io/unhealthy-gpus":"0"}}}`))
	refused("the node agent on n1 marks n0's GPU 0 unhealthy", "node", patchNode(agentN1, `{"metadata":{"annotations":{"gpuplane.io/unhealthy-gpus":"0"}}}`))
	allowed("the node agent on n0 marks its GPU 3 unhealthy", patchNode(agentN0, `{"metadata":{"annotations":{"gpuplane.io/unhealthy-gpus":"3"}}}`))
	// The GPUs of the pods gpuplane-scheduler did not place (issue 39): the
	// scheduler counts them, so only the agent on that node reports them.
	refused("the admin reports n0's unplaced pods", "node", patchNode(admin, `{"metadata":{"annotations":{"gpuplane.io/unplaced-pods":"{}"}}}`))
	refused("the node agent on n1 reports n0's unplaced pods", "node", patchNode(agentN1, `{"metadata":{"annotations":{"gpuplane.io/unplaced-pods":"{}"}}}`))
	allowed("the node agent on n0 reports its unplaced pods", patchNode(agentN0, `{"metadata":{"annotations":{"gpuplane.io/unplaced-pods":"{\"default/bypass\":{\"5\":1000,\"6\":1000}}"}}}`))
	allowed("the admin labels n0 with another label", patchNode(admin, `{"metadata":{"labels":{"topology.kubernetes.io/rack":"r1"}}}`))
	refused("the node agent on n1 relabels n0", "node", patchNode(agentN1, `{"metadata":{"labels":{"nvidia.com/gpu.product":"Tesla-V100-SXM2-16GB"}}}`))
	allowed("the node agent on n0 relabels n0", patchNode(agentN0, `{"metadata":{"labels":{"nvidia.com/gpu.product":"Tesla-V100-SXM2-16GB","gpuplane.io/gpu.model":"V100M16"},"annotations":{"gpuplane.io/gpu-uuids":"GPU-a,GPU-b,GPU-c,GPU-d,GPU-e,GPU-f,GPU-g,GPU-h"}}}`))

	// Other writers are not in the way: status updates, the garbage
	// collector removing a finalizer, deletes.
	p, err = admin.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	must(t, err)
	p.Status.Phase = corev1.PodRunning
	zero := int64(0)
	_, err = admin.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
	allowed("a status update of p", err)
	allowed("a finalizer on p", patchPod(admin, "p", []byte(`{"metadata":{"finalizers":["example.com/hold"]}}`)))
	allowed("the garbage collector removes the finalizer", patchPod(gc, "p", []byte(`{"metadata":{"finalizers":null}}`)))
	allowed("alice deletes p", alice.CoreV1().Pods("default").Delete(ctx, "p", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	allowed("the garbage collector deletes q", gc.CoreV1().Pods("default").Delete(ctx, "q", metav1.DeleteOptions{GracePeriodSeconds: &zero}))

	p, err = admin.CoreV1().Pods("default").Get(ctx, "p", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("p after delete: %v %v", err, p.Annotations)
	}
	n, err := admin.CoreV1().Nodes().Get(ctx, "n0", metav1.GetOptions{})
	must(t, err)
	if n.Labels["nvidia.com/gpu.product"] != "Tesla-V100-SXM2-16GB" || n.Labels["topology.kubernetes.io/rack"] != "r1" || n.Labels["nvidia.com/gpu.count"] != "8" {
		t.Errorf("n0 labels %v", n.Labels)
	}
}

// TestGPUStatePolicyMessages: every message names the identities the
// policy lets write.
func TestGPUStatePolicyMessages(t *testing.T) {
	vap, _ := gpuStatePolicyObjects(t)
	who := regexp.MustCompile(`\((system:serviceaccount:[^)]+)\)`)
	for _, v := range vap.Spec.Validations {
		m := who.FindStringSubmatch(v.Message)
		if m == nil || (m[1] != schedulerUser && m[1] != agentUser) {
			t.Errorf("message %q names %v, want %s or %s", v.Message, m, schedulerUser, agentUser)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// podCreator gives user the right to get and create pods in every
// namespace (ClusterRole and ClusterRoleBinding "pods") and returns a
// client that acts as user.
func podCreator(t *testing.T, c *kube.Cluster, user string) kubernetes.Interface {
	ctx := t.Context()
	must(t, create(ctx, c.Client, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "pods"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "create"}}},
	}))
	must(t, create(ctx, c.Client, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "pods"},
		Subjects:   []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}},
	}))
	return as(t, c, user)
}

// as returns a client of the admin's that impersonates user (in groups,
// and system:authenticated).
func as(t *testing.T, c *kube.Cluster, user string, groups ...string) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	cs, err := kubernetes.NewForConfig(cfg)
	must(t, err)
	return cs
}

func pod(name string, ann map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: ann},
		Spec:       corev1.PodSpec{SchedulerName: "gpuplane", Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}
}

func jsonValue(v any) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%q", v)
}

// create creates an object of one of the kinds the test uses.
func create(ctx context.Context, c kubernetes.Interface, obj any) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Pod:
		_, err = c.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.Node:
		_, err = c.CoreV1().Nodes().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		_, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		_, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		_, err = c.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, metav1.CreateOptions{})
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		_, err = c.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("create: unexpected %T", obj)
	}
	return err
}
