// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"
)

// KueueGV is the Kueue API group and version the helpers read.
var KueueGV = schema.GroupVersion{Group: "kueue.x-k8s.io", Version: "v1beta2"}

// Kueue's Job labels: the LocalQueue and the WorkloadPriorityClass.
const (
	LabelQueueName     = "kueue.x-k8s.io/queue-name"
	LabelPriorityClass = "kueue.x-k8s.io/priority-class"
)

// KueueJob is a batch/v1 Job for Kueue: queue names its LocalQueue and
// its WorkloadPriorityClass (gpuplane quota names both after the team);
// pods pods run at once (parallelism and completions), each asking gpus
// nvidia.com/gpu, 1 cpu and 1 GiB of memory, scheduled by
// gpuplane-scheduler (SchedulerName).
func KueueJob(ns, name, queue string, pods int32, gpus int64) *batchv1.Job {
	return KueueJobOf(ns, name, queue, pods, "nvidia.com/gpu", gpus)
}

// KueueJobOf is KueueJob with each pod asking n devices of the extended
// resource res (amd.com/gpu, habana.ai/gaudi) instead of nvidia.com/gpu.
func KueueJobOf(ns, name, queue string, pods int32, res corev1.ResourceName, n int64) *batchv1.Job {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"),
		res: *resource.NewQuantity(n, resource.DecimalSI)}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{LabelQueueName: queue, LabelPriorityClass: queue}},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(pods), Completions: ptr.To(pods),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				SchedulerName: SchedulerName,
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "train", Image: "busybox", Resources: corev1.ResourceRequirements{
					Requests: req, Limits: corev1.ResourceList{res: req[res]},
				}}},
			}},
		},
	}
}

// WorkloadState is what a test reads of a Kueue Workload: each
// condition's status and reason by type, and the flavor of nvidia.com/gpu
// (and of each resource) in its admission ("" when not admitted).
type WorkloadState struct {
	Name       string
	Conditions map[string]Condition
	Flavor     string
	// Flavors is the flavor of each resource in its admission.
	Flavors map[string]string
}

// Condition is one Workload condition; Since is its lastTransitionTime
// (whole seconds, as the API serializes it).
type Condition struct {
	Status, Reason, Message string
	Since                   time.Time
}

// Is reports whether condition typ is True.
func (w WorkloadState) Is(typ string) bool { return w.Conditions[typ].Status == "True" }

// JobWorkload returns the state of the Workload Kueue made for Job ns/job
// (the Workload whose owner is the Job); an error while there is none.
func (c *Cluster) JobWorkload(ctx context.Context, ns, job string) (WorkloadState, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return WorkloadState{}, err
	}
	list, err := dyn.Resource(KueueGV.WithResource("workloads")).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return WorkloadState{}, err
	}
	for _, u := range list.Items {
		for _, o := range u.GetOwnerReferences() {
			if o.Kind == "Job" && o.Name == job {
				return workloadState(&u), nil
			}
		}
	}
	return WorkloadState{}, fmt.Errorf("no workload of job %s/%s yet", ns, job)
}

func workloadState(u *unstructured.Unstructured) WorkloadState {
	w := WorkloadState{Name: u.GetName(), Conditions: map[string]Condition{}}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cd := range conds {
		m, _ := cd.(map[string]any)
		typ, _ := m["type"].(string)
		st, _ := m["status"].(string)
		re, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		ts, _ := m["lastTransitionTime"].(string)
		since, _ := time.Parse(time.RFC3339, ts)
		w.Conditions[typ] = Condition{Status: st, Reason: re, Message: msg, Since: since}
	}
	psa, _, _ := unstructured.NestedSlice(u.Object, "status", "admission", "podSetAssignments")
	if len(psa) > 0 {
		m, _ := psa[0].(map[string]any)
		w.Flavors, _, _ = unstructured.NestedStringMap(m, "flavors")
		w.Flavor = w.Flavors["nvidia.com/gpu"]
	}
	return w
}

// WaitWorkload waits until the Workload of Job ns/job satisfies cond and
// returns its state; it ends early when a control-plane component exits
// or ctx ends (its deadline: the caller's).
func (c *Cluster) WaitWorkload(ctx context.Context, ns, job, what string, cond func(WorkloadState) bool) (WorkloadState, error) {
	var w WorkloadState
	err := c.waitUntil(ctx, fmt.Sprintf("workload of job %s/%s: %s", ns, job, what), func(ctx context.Context) error {
		var err error
		if w, err = c.JobWorkload(ctx, ns, job); err != nil {
			return err
		}
		if !cond(w) {
			return fmt.Errorf("not yet: %+v", w.Conditions)
		}
		return nil
	})
	return w, err
}

// WaitJobPods waits until Job ns/job has n pods bound to nodes, and
// returns the nodes' names in pod-name order.
func (c *Cluster) WaitJobPods(ctx context.Context, ns, job string, n int) ([]string, error) {
	var nodes []string
	err := c.waitUntil(ctx, fmt.Sprintf("%d bound pods of job %s/%s", n, ns, job), func(ctx context.Context) error {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
		if err != nil {
			return err
		}
		nodes = nodes[:0]
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
				nodes = append(nodes, p.Spec.NodeName)
			}
		}
		if len(nodes) != n {
			return errors.New(strconv.Itoa(len(nodes)) + " bound")
		}
		return nil
	})
	return nodes, err
}

// NextSecond waits until the clock has passed the second of t. Kueue
// orders preemption candidates by their QuotaReserved time, which the API
// keeps in whole seconds, and breaks ties by UID (Kueue
// pkg/scheduler/preemption/common/ordering.go CandidatesOrdering): a test
// that wants "the most recently admitted" to be well defined admits the
// next workload in a later second. It ends early when ctx ends.
func NextSecond(ctx context.Context, t time.Time) error {
	d := time.Until(t.Truncate(time.Second).Add(time.Second))
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// ApplyYAML creates every object of a multi-document YAML stream (as
// gpuplane quota writes it), in order, each resource found by discovery.
func (c *Cluster) ApplyYAML(ctx context.Context, data []byte) error {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	groups, err := restmapper.GetAPIGroupResources(c.Client.Discovery())
	if err != nil {
		return err
	}
	mapper := restmapper.NewDiscoveryRESTMapper(groups)
	objs, err := decodeObjects("YAML stream", data)
	if err != nil {
		return err
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		r := dyn.Resource(m.Resource)
		if ns := o.GetNamespace(); ns != "" {
			_, err = r.Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err = r.Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// CreateNamespaces creates namespaces.
func (c *Cluster) CreateNamespaces(ctx context.Context, names ...string) error {
	for _, ns := range names {
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// ConditionTrue reports whether object u has status condition typ True.
func ConditionTrue(u *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, cd := range conds {
		if m, _ := cd.(map[string]any); m["type"] == typ && m["status"] == "True" {
			return true
		}
	}
	return false
}
