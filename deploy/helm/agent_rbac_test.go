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
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// agentMode is one way to run the node agent, the chart values that give
// it, and what its service account may then do on the API server, worked
// out by hand from the calls the agent makes (docs/node-agent.md,
// "Permissions"): each grant is "verb resource[.group]" for every
// namespace, or "verb resource.group namespace" for one.
type agentMode struct {
	name   string
	values []string
	flags  []string // the agent's API flags the DaemonSet passes
	grants []string
}

var agentModes = []agentMode{
	{name: "none", grants: nil},
	{
		name:   "labelNode",
		values: []string{"labelNode=true"},
		flags:  []string{"--label-node"},
		grants: []string{"get nodes", "patch nodes"},
	},
	{
		name:   "schedulerChoice",
		values: []string{"schedulerChoice=true"},
		flags:  []string{"--scheduler-choice"},
		grants: []string{"list pods", "patch pods", "create events"},
	},
	{
		name:   "scheduler",
		values: []string{"scheduler.enabled=true"},
		flags:  []string{"--label-node", "--scheduler-choice"},
		grants: []string{"get nodes", "patch nodes", "list pods", "patch pods", "create events"},
	},
	{
		name:   "nodeFeatureAPI",
		values: []string{"nodeFeatureAPI=true"},
		flags:  []string{"--node-feature-api"},
		grants: []string{"get nodefeatures.nfd.k8s-sigs.io " + namespace, "create nodefeatures.nfd.k8s-sigs.io " + namespace, "update nodefeatures.nfd.k8s-sigs.io " + namespace},
	},
	{
		// useNodeConfig gets the Node, followNodeConfig watches it with a
		// fieldSelector (a watch is authorized as list and watch).
		name:   "nodeConfigs",
		values: []string{"nodeConfigs.name=gpu-operator-configs"},
		flags:  []string{"--config-dir"},
		grants: []string{"get nodes", "list nodes", "watch nodes"},
	},
}

// renderMode renders the chart for a mode, its objects named after the
// mode (fullnameOverride), so that every mode's RBAC can live on one API
// server.
func renderMode(t *testing.T, m agentMode) rendered {
	t.Helper()
	set := append([]string{"fullnameOverride=agent-" + strings.ToLower(m.name)}, m.values...)
	return render(t, "--set", strings.Join(set, ","))
}

// TestAgentRBACTemplate: the DaemonSet passes exactly the API flags of the
// mode, and mounts the token only where one is passed.
func TestAgentRBACTemplate(t *testing.T) {
	api := []string{"--label-node", "--scheduler-choice", "--node-feature-api", "--config-dir"}
	for _, m := range agentModes {
		r := renderMode(t, m)
		var ds appsv1.DaemonSet
		r.get(t, "DaemonSet", "agent-"+strings.ToLower(m.name), &ds)
		p := ds.Spec.Template.Spec
		var got []string
		for _, a := range p.Containers[0].Args {
			if flag, _, _ := strings.Cut(a, "="); slices.Contains(api, flag) {
				got = append(got, flag)
			}
		}
		if !slices.Equal(got, m.flags) {
			t.Errorf("%s: API flags %v, want %v", m.name, got, m.flags)
		}
		if mount := p.AutomountServiceAccountToken != nil && *p.AutomountServiceAccountToken; mount != (len(m.flags) > 0) {
			t.Errorf("%s: automountServiceAccountToken %v with flags %v", m.name, mount, m.flags)
		}
	}
}

// The requests checked against each mode's table: every verb on the
// resources a node agent could abuse, cluster-wide ("") and in two
// namespaces.
var (
	sarVerbs     = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	sarResources = []string{"nodes", "nodes/status", "pods", "pods/status", "pods/binding", "pods/eviction", "secrets", "configmaps", "events", "nodefeatures.nfd.k8s-sigs.io"}
)

// allowedByTable reports whether a mode's grants allow verb on
// resource[/subresource][.group] in namespace ns ("" for cluster-wide).
func allowedByTable(grants []string, verb, res, ns string) bool {
	for _, g := range grants {
		f := strings.Fields(g)
		if f[0] != verb || f[1] != res {
			continue
		}
		if len(f) == 2 || f[2] == ns {
			return true
		}
	}
	return false
}

// TestAgentRBACOnCluster installs, for each mode, the chart's service
// account and the roles bound to it on a real kube-apiserver, and checks
// as that service account (a TokenRequest token):
//   - that SubjectAccessReviews answer exactly the mode's table (agentModes)
//     for sarVerbs x sarResources, and that SelfSubjectRulesReview lists
//     exactly the table beyond what every authenticated user may;
//   - the agent's own calls: labels.ApplyToNode on its Node works only
//     with --label-node, and deviceplugin.Assignments.Take (the list of
//     the node's pods and the patch of gpuplane.io/allocated) only with
//     --scheduler-choice; otherwise both are Forbidden.
func TestAgentRBACOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c := kube.StartT(t, kube.Options{})
	ctx := t.Context()
	admin := c.Client
	for _, ns := range []string{namespace, "other"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// What any service account may do without a binding of its own.
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "nobody"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nobody := saClient(t, c, "nobody")
	baseline := map[string]map[string]bool{}
	for _, ns := range []string{namespace, "default"} {
		baseline[ns] = rulesOf(t, ctx, nobody, ns)
	}

	for _, m := range agentModes {
		t.Run(m.name, func(t *testing.T) {
			r := renderMode(t, m)
			sa := installAgentRBAC(t, ctx, admin, r)
			user := "system:serviceaccount:" + namespace + ":" + sa
			waitGranted(t, ctx, admin, user, m.grants)
			as := saClient(t, c, sa)

			// kubectl auth can-i, for the whole table.
			for _, res := range sarResources {
				namespaces := []string{""}
				if res != "nodes" && res != "nodes/status" {
					namespaces = append(namespaces, "default", namespace)
				}
				for _, ns := range namespaces {
					for _, verb := range sarVerbs {
						got := canI(t, ctx, admin, user, verb, res, ns)
						if want := allowedByTable(m.grants, verb, res, ns); got != want {
							t.Errorf("can-i %s %s -n %q as %s: %v, want %v", verb, res, ns, user, got, want)
						}
					}
				}
			}
			// Exactly the table's rules, beyond the baseline.
			for _, ns := range []string{namespace, "default"} {
				var want []string
				for _, g := range m.grants {
					if f := strings.Fields(g); len(f) == 2 || f[2] == ns {
						want = append(want, f[0]+" "+f[1])
					}
				}
				var got []string
				for rule := range rulesOf(t, ctx, as, ns) {
					if !baseline[ns][rule] {
						got = append(got, rule)
					}
				}
				slices.Sort(want)
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("rules in %s beyond any service account's: %v, want %v", ns, got, want)
				}
			}

			// The agent's own calls.
			node := "node-" + strings.ToLower(m.name)
			if _, err := admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			labelNode := slices.Contains(m.flags, "--label-node")
			l := map[string]string{"nvidia.com/gpu.present": "true", "nvidia.com/gpu.count": "1"}
			ann := map[string]string{gpuresource.AnnotationNodeGPUUUIDs: "GPU-0"}
			err := labels.ApplyToNode(ctx, as, node, l, ann)
			if labelNode && err != nil {
				t.Errorf("labels.ApplyToNode with --label-node: %v", err)
			}
			if !labelNode && !apierrors.IsForbidden(err) {
				t.Errorf("labels.ApplyToNode without --label-node: %v, want Forbidden", err)
			}
			if labelNode {
				n, err := admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if n.Labels["nvidia.com/gpu.count"] != "1" || n.Annotations[gpuresource.AnnotationNodeGPUUUIDs] != "GPU-0" {
					t.Errorf("node %s after labelling: labels %v, annotations %v", node, n.Labels, n.Annotations)
				}
			}

			pod := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "gpu-" + strings.ToLower(m.name), Namespace: "other", Annotations: map[string]string{
					gpuresource.AnnotationGPUs: "0", gpuresource.AnnotationGPUShare: "1000",
				}},
				Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{
					Name: "main", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
				}}},
			}
			if _, err := admin.CoreV1().Pods("other").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			choice := slices.Contains(m.flags, "--scheduler-choice")
			var gave []int
			took, err := deviceplugin.NewAssignments(as, node).Take(ctx, "nvidia.com/gpu", 1, func(ch deviceplugin.Choice) error {
				gave = ch.GPUs
				return nil
			})
			if choice && (err != nil || !took || !slices.Equal(gave, []int{0})) {
				t.Errorf("Assignments.Take with --scheduler-choice: %v, %v, GPUs %v; want the pod's GPU 0", took, err, gave)
			}
			if !choice && (!apierrors.IsForbidden(err) || took || gave != nil) {
				t.Errorf("Assignments.Take without --scheduler-choice: %v, %v, GPUs %v; want Forbidden before any choice", took, err, gave)
			}
			p, err := admin.CoreV1().Pods("other").Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := p.Annotations[gpuresource.AnnotationAllocated], map[bool]string{true: "true"}[choice]; got != want {
				t.Errorf("pod %s: %s=%q, want %q", pod.Name, gpuresource.AnnotationAllocated, got, want)
			}
		})
	}
}

// installAgentRBAC creates the node agent's ServiceAccount from r and every
// rendered (Cluster)RoleBinding naming it, with its (Cluster)Role, and
// returns the account's name. Nothing else is installed: the account has
// exactly the chart's permissions.
func installAgentRBAC(t *testing.T, ctx context.Context, admin kubernetes.Interface, r rendered) string {
	t.Helper()
	var ds appsv1.DaemonSet
	var sa corev1.ServiceAccount
	for _, k := range r.keys() {
		if strings.HasPrefix(k, "DaemonSet/") {
			r.get(t, "DaemonSet", strings.TrimPrefix(k, "DaemonSet/"), &ds)
		}
	}
	name := ds.Spec.Template.Spec.ServiceAccountName
	r.get(t, "ServiceAccount", name, &sa)
	if _, err := admin.CoreV1().ServiceAccounts(namespace).Create(ctx, &sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	isAgent := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == name && s.Namespace == namespace
		})
	}
	for _, k := range r.keys() {
		kind, n, _ := strings.Cut(k, "/")
		switch kind {
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			r.get(t, kind, n, &b)
			if !isAgent(b.Subjects) {
				continue
			}
			var role rbacv1.ClusterRole
			r.get(t, b.RoleRef.Kind, b.RoleRef.Name, &role)
			if _, err := admin.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, &b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "RoleBinding":
			var b rbacv1.RoleBinding
			r.get(t, kind, n, &b)
			if !isAgent(b.Subjects) {
				continue
			}
			if b.RoleRef.Kind != "Role" {
				t.Fatalf("%s binds %s %s", k, b.RoleRef.Kind, b.RoleRef.Name)
			}
			var role rbacv1.Role
			r.get(t, "Role", b.RoleRef.Name, &role)
			if _, err := admin.RbacV1().Roles(role.Namespace).Create(ctx, &role, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.RbacV1().RoleBindings(b.Namespace).Create(ctx, &b, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return name
}

// waitGranted waits until the API server's RBAC authorizer, which reads
// roles and bindings from an informer cache, allows user every grant of
// the table ("verb resource [namespace]"): bindings just created are not
// seen at once (TestAgentRBACOnCluster failed a cold CI run so).
func waitGranted(t *testing.T, ctx context.Context, admin kubernetes.Interface, user string, grants []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, g := range grants {
			f := append(strings.Fields(g), "")
			if !canI(t, ctx, admin, user, f[0], f[1], f[2]) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("RBAC of %s not in effect after 30 s: %v", user, err)
	}
}

// saClient returns a client authenticated as the service account name of
// the release namespace, with a token from the TokenRequest API.
func saClient(t *testing.T, c *kube.Cluster, name string) kubernetes.Interface {
	t.Helper()
	tok, err := c.Client.CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: c.URL, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData}})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// canI asks the API server, as kubectl auth can-i --as does, whether user
// (a service account, with its groups) may verb res ("pods/status",
// "nodefeatures.nfd.k8s-sigs.io") in ns.
func canI(t *testing.T, ctx context.Context, admin kubernetes.Interface, user, verb, res, ns string) bool {
	t.Helper()
	res, group, _ := strings.Cut(res, ".")
	res, sub, _ := strings.Cut(res, "/")
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: res, Subresource: sub},
	}}
	out, err := admin.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Status.Allowed
}

// rulesOf returns the resource rules the client's user has in ns
// (SelfSubjectRulesReview, as kubectl auth can-i --list), one
// "verb resource[.group]" per verb and resource.
func rulesOf(t *testing.T, ctx context.Context, c kubernetes.Interface, ns string) map[string]bool {
	t.Helper()
	out, err := c.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status.Incomplete {
		t.Fatalf("rules review in %s incomplete: %s", ns, out.Status.EvaluationError)
	}
	rules := map[string]bool{}
	for _, r := range out.Status.ResourceRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					name := res
					if g != "" {
						name += "." + g
					}
					if len(r.ResourceNames) > 0 {
						name += fmt.Sprintf("%v", r.ResourceNames)
					}
					rules[v+" "+name] = true
				}
			}
		}
	}
	return rules
}
