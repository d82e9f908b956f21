// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package workload puts internal/gang's rule on the API server: it reads
// a pod's controller chain (dynamic client), makes sure the gang's
// Workload and PodGroup (scheduling.k8s.io/v1beta1, upstream's gang API)
// exist, owned by the job, and tells whether the API server serves that
// API at all (Served).
package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	schedv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/gpuplane/gpuplane/internal/gang"
)

// GroupVersion is the gang API's group and version in Kubernetes 1.37.
const GroupVersion = "scheduling.k8s.io/v1beta1"

// ErrNotServed is wrapped by Served's error when the API server does not
// serve Workloads and PodGroups.
var ErrNotServed = errors.New("the API server does not serve " + GroupVersion + " workloads and podgroups")

// Served returns nil when the API server serves the Workload and PodGroup
// resources of GroupVersion; else an error wrapping ErrNotServed that says
// what to turn on, or the discovery error.
func Served(d discovery.DiscoveryInterface) error {
	rl, err := d.ServerResourcesForGroupVersion(GroupVersion)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("discovery of %s: %w", GroupVersion, err)
	}
	have := map[string]bool{}
	if rl != nil {
		for _, r := range rl.APIResources {
			have[r.Name] = true
		}
	}
	if have["workloads"] && have["podgroups"] {
		return nil
	}
	return fmt.Errorf("%w (feature gate GenericWorkload, beta and off by default in Kubernetes 1.37): "+
		"start kube-apiserver with --feature-gates=GenericWorkload=true --runtime-config=%s=true, "+
		"and kube-scheduler (gpuplane-scheduler) and kube-controller-manager with --feature-gates=GenericWorkload=true; "+
		"until then the pods of training jobs are scheduled one by one, not as gangs", ErrNotServed, GroupVersion)
}

// TemplateName is the one PodGroupTemplate of a gang's Workload.
const TemplateName = "gang"

// resources maps the kinds of a controller chain that the rule reads to
// their resource names.
var resources = map[string]string{
	"batch/Job":                     "jobs",
	"jobset.x-k8s.io/JobSet":        "jobsets",
	"trainer.kubeflow.org/TrainJob": "trainjobs",
	"kubeflow.org/PyTorchJob":       "pytorchjobs",
	"kubeflow.org/MPIJob":           "mpijobs",
	"ray.io/RayCluster":             "rayclusters",
}

// Grouper gives the pods of training jobs their gang.
type Grouper struct {
	dyn    dynamic.Interface
	client kubernetes.Interface
	mu     sync.Mutex
	// made holds the "namespace/name/uid" of gangs whose objects exist;
	// emptied when it reaches maxMade (a gang seen again is then made
	// again: AlreadyExists).
	made map[string]bool
}

// maxMade bounds Grouper.made: 10,000 keys of about 100 bytes.
const maxMade = 10000

// NewGrouper returns a Grouper reading owners with dyn and writing
// Workloads and PodGroups with client.
func NewGrouper(dyn dynamic.Interface, client kubernetes.Interface) *Grouper {
	return &Grouper{dyn: dyn, client: client, made: map[string]bool{}}
}

// Group returns the name of the PodGroup of pod p (in namespace ns, whose
// labels are nsLabels), after making sure that it and its Workload exist
// (not with dryRun, an admission dry run: then only the name); "" for a
// pod in no gang, one that already names a scheduling group, or one opted
// out (gang.OptOut on the namespace, the job or the pod).
func (g *Grouper) Group(ctx context.Context, p *corev1.Pod, ns string, nsLabels map[string]string, dryRun bool) (string, error) {
	if p.Spec.SchedulingGroup != nil || nsLabels[gang.OptOut] == "false" {
		return "", nil
	}
	ctrl := metav1.GetControllerOf(p)
	if ctrl == nil {
		return "", nil
	}
	gg, err := gang.Of(p.Labels, refOf(ctrl), func(r gang.Ref) (*gang.Object, error) { return g.get(ctx, ns, r) })
	if err != nil || gg == nil {
		return "", err
	}
	if dryRun {
		return gg.Name, nil
	}
	if err := g.ensure(ctx, ns, gg); err != nil {
		return "", err
	}
	return gg.Name, nil
}

func refOf(o *metav1.OwnerReference) *gang.Ref {
	return &gang.Ref{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: string(o.UID)}
}

// get reads an owner; nil for a kind the rule does not read.
func (g *Grouper) get(ctx context.Context, ns string, r gang.Ref) (*gang.Object, error) {
	res, ok := resources[r.Group()+"/"+r.Kind]
	if !ok {
		return nil, nil
	}
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("owner %s %s: apiVersion %q: %w", r.Kind, r.Name, r.APIVersion, err)
	}
	u, err := g.dyn.Resource(gv.WithResource(res)).Namespace(ns).Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("owner %s %s/%s: %w", r.Kind, ns, r.Name, err)
	}
	if string(u.GetUID()) != r.UID {
		return nil, fmt.Errorf("owner %s %s/%s: uid %s, but the owner reference names %s (replaced?)", r.Kind, ns, r.Name, u.GetUID(), r.UID)
	}
	return objectOf(u), nil
}

func objectOf(u *unstructured.Unstructured) *gang.Object {
	o := &gang.Object{
		Ref:         gang.Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Name: u.GetName(), UID: string(u.GetUID())},
		Labels:      u.GetLabels(),
		Annotations: u.GetAnnotations(),
	}
	o.Spec, _ = u.Object["spec"].(map[string]any)
	for _, or := range u.GetOwnerReferences() {
		if or.Controller != nil && *or.Controller {
			o.Controller = refOf(&or)
			break
		}
	}
	return o
}

// ensure creates the gang's Workload and PodGroup unless they exist. Both
// have the job as owner, so the garbage collector deletes them with it;
// the PodGroup also has the Workload, as the Job controller makes them
// (k8s.io/kubernetes v1.37.2 pkg/controller/job/job_scheduling_manager.go).
func (g *Grouper) ensure(ctx context.Context, ns string, gg *gang.Gang) error {
	key := ns + "/" + gg.Name + "/" + gg.Owner.UID
	g.mu.Lock()
	done := g.made[key]
	g.mu.Unlock()
	if done {
		return nil
	}
	gv, err := schema.ParseGroupVersion(gg.Owner.APIVersion)
	if err != nil {
		return err
	}
	owner := metav1.OwnerReference{APIVersion: gg.Owner.APIVersion, Kind: gg.Owner.Kind, Name: gg.Owner.Name, UID: types.UID(gg.Owner.UID)}
	policy := schedv1beta1.PodGroupSchedulingPolicy{Gang: &schedv1beta1.GangSchedulingPolicy{MinCount: gg.MinCount}}
	wl := &schedv1beta1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: gg.Name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner},
			Labels: map[string]string{"app.kubernetes.io/managed-by": "gpuplane-webhook"}},
		Spec: schedv1beta1.WorkloadSpec{
			ControllerRef:     &schedv1beta1.TypedLocalObjectReference{APIGroup: gv.Group, Kind: gg.Owner.Kind, Name: gg.Owner.Name},
			PodGroupTemplates: []schedv1beta1.PodGroupTemplate{{Name: TemplateName, SchedulingPolicy: policy}},
		},
	}
	made, err := g.client.SchedulingV1beta1().Workloads(ns).Create(ctx, wl, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		made, err = g.client.SchedulingV1beta1().Workloads(ns).Get(ctx, gg.Name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("workload %s/%s: %w", ns, gg.Name, err)
	}
	pg := &schedv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: gg.Name, Namespace: ns, Labels: wl.Labels, OwnerReferences: []metav1.OwnerReference{owner,
			{APIVersion: GroupVersion, Kind: "Workload", Name: made.Name, UID: made.UID}}},
		Spec: schedv1beta1.PodGroupSpec{
			WorkloadRef:      &schedv1beta1.WorkloadReference{WorkloadName: made.Name, TemplateName: TemplateName},
			SchedulingPolicy: policy,
		},
	}
	if _, err := g.client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("podgroup %s/%s: %w", ns, gg.Name, err)
	}
	g.mu.Lock()
	if len(g.made) >= maxMade {
		clear(g.made)
	}
	g.made[key] = true
	g.mu.Unlock()
	return nil
}
