// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/webhook/policy"
)

// admit answers one request. Only Pods are mutated (a pod template is left
// as its owner wrote it; its pods are mutated when created); Pods and pod
// templates are validated. Other kinds, and subresources, are allowed. A
// refusal comes with the rules broken, each once.
func (h *Handler) admit(ctx context.Context, req *admissionv1.AdmissionRequest, mutate bool) (*admissionv1.AdmissionResponse, []string, error) {
	allow := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if req.SubResource != "" || req.Operation == admissionv1.Delete || req.Operation == admissionv1.Connect {
		return allow, nil, nil
	}
	pod, err := podOf(req.Kind, req.Object.Raw)
	if err != nil {
		return nil, nil, err
	}
	if pod == nil {
		return allow, nil, nil
	}
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		// A workload updated without a change to what the policy reads
		// of its pod template (a controller's annotation, a new image)
		// is not checked again: a workload admitted before the policy
		// keeps working.
		if old, err := podOf(req.Kind, req.OldObject.Raw); err == nil && reflect.DeepEqual(old, pod) {
			return allow, nil, nil
		}
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	ns := policy.Namespace{Name: pod.Namespace, Labels: map[string]string{"kubernetes.io/metadata.name": pod.Namespace}}
	if h.namespaces != nil {
		l, err := h.namespaces(ctx, pod.Namespace)
		if err != nil {
			return nil, nil, &namespaceError{fmt.Errorf("namespace %s: %v", pod.Namespace, err)}
		}
		ns.Labels = l
	}
	if mutate && (req.Kind.Kind != "Pod" || req.Operation != admissionv1.Create) ||
		!mutate && req.Kind.Kind == "Pod" && req.Operation != admissionv1.Create {
		// A pod's resources and tolerations are checked once, at
		// creation; updates (status, labels) are not refused.
		return allow, nil, nil
	}
	h.readClaims(ctx, pod)
	if !h.policy.Excluded(ns.Name) {
		allow.Warnings = pod.Notes()
	}
	if mutate {
		if err := h.patch(ctx, req, pod, ns, allow); err != nil {
			return nil, nil, err
		}
		return allow, nil, nil
	}
	vs := h.policy.Validate(pod, ns)
	if len(vs) == 0 {
		return allow, nil, nil
	}
	refusal, rules := refuse(req, pod, vs)
	refusal.Warnings = allow.Warnings
	return refusal, rules, nil
}

// patch sets on allow the JSON patch of the policy's mutations of pod and
// the gang's, if any.
func (h *Handler) patch(ctx context.Context, req *admissionv1.AdmissionRequest, pod *policy.Pod, ns policy.Namespace, allow *admissionv1.AdmissionResponse) error {
	ops := h.policy.Mutate(pod, ns)
	if op := h.gangOp(ctx, req, ns.Labels); op != nil {
		ops = append(ops, *op)
	}
	if len(ops) == 0 {
		return nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	pt := admissionv1.PatchTypeJSONPatch
	allow.Patch, allow.PatchType = patch, &pt
	return nil
}

// refuse is the refusal of pod for violations vs (at least one), with the
// rules broken, each once.
func refuse(req *admissionv1.AdmissionRequest, pod *policy.Pod, vs []policy.Violation) (*admissionv1.AdmissionResponse, []string) {
	msgs := make([]string, len(vs))
	var rules []string
	for i, v := range vs {
		msgs[i] = v.String()
		if !slices.Contains(rules, v.Rule) {
			rules = append(rules, v.Rule)
		}
	}
	what, name := strings.ToLower(req.Kind.Kind), req.Name
	if name == "" {
		// A pod with only generateName: kube-apiserver v1.37 names it
		// before admission, but AdmissionRequest.name may be empty
		// (k8s.io/api admission/v1).
		name = pod.Name
	}
	return deny(req.UID, http.StatusForbidden, fmt.Sprintf("gpuplane GPU policy refuses %s %s/%s: %s", what, pod.Namespace, name, strings.Join(msgs, "; "))), rules
}

// readClaims gives the pod's claims their specs (policy.Claim.Spec) with
// h.Claims. A claim that cannot be read is logged and left without: its
// devices are not counted, and the pod's notes (answered as warnings) name
// it.
func (h *Handler) readClaims(ctx context.Context, pod *policy.Pod) {
	for i := range pod.Claims {
		c := &pod.Claims[i]
		if h.Claims == nil {
			c.Unread = "not read (the webhook reads no claim)"
			continue
		}
		spec, err := h.Claims(ctx, pod.Namespace, *c)
		if err != nil {
			klog.ErrorS(err, "claim not read: its devices are not counted", "pod", klog.KRef(pod.Namespace, pod.Name), "claim", c.Name)
			c.Unread = "not read: " + err.Error()
		}
		c.Spec = spec
	}
}

// gangOp returns the patch that puts a pod of a training job in its
// gang's PodGroup, nil for none. An error (an owner or the API server
// unreadable) is logged and the pod admitted without a group, as with
// failurePolicy Ignore: it is then scheduled alone.
func (h *Handler) gangOp(ctx context.Context, req *admissionv1.AdmissionRequest, nsLabels map[string]string) *policy.PatchOp {
	if h.Gangs == nil {
		return nil
	}
	var p corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &p); err != nil {
		return nil
	}
	name, err := h.Gangs(ctx, &p, req.Namespace, nsLabels, req.DryRun != nil && *req.DryRun)
	if err != nil {
		klog.ErrorS(err, "pod admitted without a gang: it is scheduled alone", "pod", klog.KRef(req.Namespace, p.Name+p.GenerateName))
		return nil
	}
	if name == "" {
		return nil
	}
	return &policy.PatchOp{Op: "add", Path: "/spec/schedulingGroup", Value: map[string]string{"podGroupName": name}}
}

// namespaceError is an error reading a namespace's labels.
type namespaceError struct{ err error }

func (e *namespaceError) Error() string { return e.err.Error() }
func (e *namespaceError) Unwrap() error { return e.err }

// podOf reads the pod, or the pod template, of an object of the given
// kind; nil for a kind that has none.
func podOf(kind metav1.GroupVersionKind, raw []byte) (*policy.Pod, error) {
	gk := kind.Group + "/" + kind.Kind
	var meta *corev1.PodTemplateSpec
	var owners []string
	switch gk {
	case "/Pod":
		var p corev1.Pod
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("reading Pod: %v", err)
		}
		for _, o := range p.OwnerReferences {
			owners = append(owners, o.Kind)
		}
		meta = &corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
		if meta.Name == "" && meta.GenerateName != "" {
			meta.Name = meta.GenerateName + "*"
		}
	case "apps/Deployment":
		var d appsv1.Deployment
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading Deployment: %v", err)
		}
		meta = &d.Spec.Template
		meta.Namespace = d.Namespace
	case "apps/StatefulSet":
		var d appsv1.StatefulSet
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading StatefulSet: %v", err)
		}
		meta = &d.Spec.Template
		meta.Namespace = d.Namespace
	case "apps/DaemonSet":
		var d appsv1.DaemonSet
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading DaemonSet: %v", err)
		}
		meta = &d.Spec.Template
		meta.Namespace = d.Namespace
		owners = []string{"DaemonSet"} // its pods' owner
	case "apps/ReplicaSet":
		var d appsv1.ReplicaSet
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading ReplicaSet: %v", err)
		}
		meta = &d.Spec.Template
		meta.Namespace = d.Namespace
	case "batch/Job":
		var d batchv1.Job
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading Job: %v", err)
		}
		meta = &d.Spec.Template
		meta.Namespace = d.Namespace
	case "batch/CronJob":
		var d batchv1.CronJob
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("reading CronJob: %v", err)
		}
		meta = &d.Spec.JobTemplate.Spec.Template
		meta.Namespace = d.Namespace
	default:
		return nil, nil
	}
	p := FromPodSpec(meta.ObjectMeta.Labels, &meta.Spec)
	p.Name, p.Namespace, p.Owners = meta.Name, meta.Namespace, owners
	return p, nil
}

// FromPodSpec converts a corev1 pod spec and its labels to the policy's
// Pod. Each container's resources are its limits, or its requests where
// it gives no limit (extended resources must be equal in both).
func FromPodSpec(labels map[string]string, s *corev1.PodSpec) *policy.Pod {
	p := &policy.Pod{
		Labels:        labels,
		SchedulerName: s.SchedulerName,
		NodeSelector:  s.NodeSelector,
	}
	if a := s.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range term.MatchExpressions {
				if slices.Contains(policy.ModelLabels, e.Key) && e.Operator == corev1.NodeSelectorOpIn {
					p.ModelAffinity = append(p.ModelAffinity, e.Values)
				}
			}
		}
	}
	for _, t := range s.Tolerations {
		p.Tolerations = append(p.Tolerations, policy.Toleration{Key: t.Key, Operator: string(t.Operator), Value: t.Value, Effect: string(t.Effect)})
	}
	for _, c := range s.ResourceClaims {
		p.Claims = append(p.Claims, policy.Claim{Name: c.Name, ClaimName: deref(c.ResourceClaimName), TemplateName: deref(c.ResourceClaimTemplateName)})
	}
	add := func(c *corev1.Container, init bool) {
		res := map[string]int64{}
		for n, q := range c.Resources.Requests {
			res[string(n)] = q.Value()
		}
		for n, q := range c.Resources.Limits {
			res[string(n)] = q.Value()
		}
		sidecar := init && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		p.Containers = append(p.Containers, policy.Container{Name: c.Name, Init: init, Sidecar: sidecar, Resources: res})
	}
	for i := range s.InitContainers {
		add(&s.InitContainers[i], true)
	}
	for i := range s.Containers {
		add(&s.Containers[i], false)
	}
	return p
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
