// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package owners finds each pod's job for gpuplane cost: the
// pod's top owner, found by following controller owner references through
// the Kubernetes API (Pod -> Job -> CronJob, Pod -> ReplicaSet ->
// Deployment, Pod -> PyTorchJob, MPIJob, RayCluster, or any other kind),
// with the pod's labels and its namespace's labels (the team). A pod that
// is gone falls back to its labels (JobFromLabels), the one home of that
// rule.
//
// It reads object metadata only (k8s.io/client-go/metadata), so any kind,
// custom resources included, is followed without its Go types. API calls:
// one discovery, one pod list and one namespace get per namespace, and one
// get per distinct owner, cached.
package owners

import (
	"context"
	"fmt"
	"sort"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// maxDepth bounds the owner chain followed, against reference cycles.
const maxDepth = 10

// Pod names a pod to look up.
type Pod struct {
	Namespace, Name string
	// Labels are the pod's labels as the caller knows them (from its
	// metrics); used only when the pod is gone.
	Labels map[string]string
}

// Owner is a Kubernetes object in an owner chain.
type Owner struct {
	APIVersion, Kind, Name string
}

// Info is what Lookup found for one pod.
type Info struct {
	Namespace, Pod string
	// Found reports that the pod exists; when false, Job comes from the
	// given labels (JobFromLabels) and Top is zero.
	Found bool
	// Job is the pod's job: Top's name when found, else JobFromLabels.
	Job string
	// Top is the top owner: the last controller in the chain, or the pod
	// itself (Kind "Pod") when it has no controller.
	Top Owner
	// Note says why the chain stopped before an object without a
	// controller: an owner that is gone, of a kind the server does not
	// serve, or not readable. Empty otherwise.
	Note string
	// Labels are the pod's labels: the server's when found, else the
	// given ones.
	Labels map[string]string
	// NamespaceLabels are the labels of the pod's namespace; nil when the
	// namespace is gone.
	NamespaceLabels map[string]string
	// Team is the value of the namespace's team label; empty when unset
	// or when no team label was given.
	Team string
}

// Resolver looks pods up. It caches what it reads for its lifetime; use one
// per cost run.
type Resolver struct {
	meta      metadata.Interface
	mapper    *restmapper.DeferredDiscoveryRESTMapper
	teamLabel string
	owners    map[ownerKey]ownerEntry
}

type ownerKey struct {
	namespace string
	owner     Owner
}

type ownerEntry struct {
	uid        string
	controller *metav1.OwnerReference
	note       string // why the object could not be read
}

// New returns a Resolver for the cluster of the kubeconfig file (empty:
// the in-cluster configuration), reading the team from the namespace label
// teamLabel (empty: no team).
func New(kubeconfig, teamLabel string) (*Resolver, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %q: %w", kubeconfig, err)
	}
	return NewForConfig(cfg, teamLabel)
}

// NewForConfig is New for a client configuration.
func NewForConfig(cfg *rest.Config, teamLabel string) (*Resolver, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Resolver{
		meta:      mc,
		mapper:    restmapper.NewDeferredDiscoveryRESTMapperWithContext(memory.NewMemCacheClientWithContext(dc)),
		teamLabel: teamLabel,
		owners:    map[ownerKey]ownerEntry{},
	}, nil
}

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// Lookup returns one Info per pod, in the order given. An error (the API
// server unreachable, pods not listable) names the namespace and what
// failed; an owner that is gone or unreadable is not an error but a Note.
func (r *Resolver) Lookup(ctx context.Context, pods []Pod) ([]Info, error) {
	byNS := map[string][]int{}
	for i, p := range pods {
		byNS[p.Namespace] = append(byNS[p.Namespace], i)
	}
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		namespaces = append(namespaces, ns)
	}
	sort.Strings(namespaces)
	out := make([]Info, len(pods))
	for _, ns := range namespaces {
		var nsLabels map[string]string
		nsObj, err := r.meta.Resource(namespacesGVR).Get(ctx, ns, metav1.GetOptions{})
		switch {
		case err == nil:
			nsLabels = nsObj.Labels
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
		list, err := r.meta.Resource(podsGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list pods of namespace %s: %w", ns, err)
		}
		live := make(map[string]*metav1.PartialObjectMetadata, len(list.Items))
		for k := range list.Items {
			live[list.Items[k].Name] = &list.Items[k]
		}
		for _, i := range byNS[ns] {
			p := pods[i]
			info := Info{Namespace: ns, Pod: p.Name, NamespaceLabels: nsLabels, Team: nsLabels[r.teamLabel]}
			obj := live[p.Name]
			if obj == nil {
				info.Job, info.Labels = JobFromLabels(p.Labels, p.Name), p.Labels
				out[i] = info
				continue
			}
			info.Found, info.Labels = true, obj.Labels
			info.Top, info.Note, err = r.top(ctx, ns, Owner{APIVersion: "v1", Kind: "Pod", Name: p.Name}, metav1.GetControllerOfNoCopy(obj))
			if err != nil {
				return nil, fmt.Errorf("pod %s/%s: %w", ns, p.Name, err)
			}
			info.Job = info.Top.Name
			out[i] = info
		}
	}
	return out, nil
}

// top follows controller references from obj (whose controller is ref)
// to the top.
func (r *Resolver) top(ctx context.Context, ns string, obj Owner, ref *metav1.OwnerReference) (Owner, string, error) {
	for depth := 0; ref != nil; depth++ {
		if depth == maxDepth {
			return obj, fmt.Sprintf("owner chain longer than %d, stopped at %s %s", maxDepth, obj.Kind, obj.Name), nil
		}
		next := Owner{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name}
		e, err := r.owner(ctx, ns, next)
		if err != nil {
			return Owner{}, "", err
		}
		if e.note == "" && e.uid != string(ref.UID) {
			e = ownerEntry{note: fmt.Sprintf("%s %s is gone (a new object has its name)", next.Kind, next.Name)}
		}
		if e.note != "" {
			// The owner reference still names the job.
			return next, e.note, nil
		}
		obj, ref = next, e.controller
	}
	return obj, "", nil
}

// owner reads an owner's metadata, cached. An owner that is gone, of a
// kind the server does not serve, or forbidden gives an entry with a note.
func (r *Resolver) owner(ctx context.Context, ns string, o Owner) (ownerEntry, error) {
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil {
		return ownerEntry{note: fmt.Sprintf("owner %s %s: bad apiVersion %q", o.Kind, o.Name, o.APIVersion)}, nil
	}
	m, err := r.mapper.RESTMappingWithContext(ctx, gv.WithKind(o.Kind).GroupKind(), gv.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return ownerEntry{note: fmt.Sprintf("%s %s: kind %s of %s not served by the API server", o.Kind, o.Name, o.Kind, o.APIVersion)}, nil
		}
		return ownerEntry{}, fmt.Errorf("discovery of %s: %w", gv.WithKind(o.Kind), err)
	}
	key := ownerKey{owner: o}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		key.namespace = ns
	}
	if e, ok := r.owners[key]; ok {
		return e, nil
	}
	res := r.meta.Resource(m.Resource)
	var obj *metav1.PartialObjectMetadata
	if key.namespace != "" {
		obj, err = res.Namespace(ns).Get(ctx, o.Name, metav1.GetOptions{})
	} else {
		obj, err = res.Get(ctx, o.Name, metav1.GetOptions{})
	}
	var e ownerEntry
	switch {
	case err == nil:
		e = ownerEntry{uid: string(obj.UID)}
		if c := metav1.GetControllerOfNoCopy(obj); c != nil {
			c := *c
			e.controller = &c
		}
	case apierrors.IsNotFound(err):
		e.note = fmt.Sprintf("%s %s is gone", o.Kind, o.Name)
	case apierrors.IsForbidden(err):
		e.note = fmt.Sprintf("%s %s is not readable: %v", o.Kind, o.Name, err)
	default:
		return ownerEntry{}, fmt.Errorf("get %s %s: %w", o.Kind, o.Name, err)
	}
	r.owners[key] = e
	return e, nil
}
