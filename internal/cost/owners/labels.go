// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package owners

import "strings"

// JobLabels are the pod labels that name a pod's job, in the order they are
// tried:
//
//   - training.kubeflow.org/job-name: the Kubeflow training operator's
//     PyTorchJob, TFJob, MPIJob, ... (JobNameLabel in kubeflow/training-
//     operator pkg/apis/kubeflow.org/v1/common_types.go; the MPI operator
//     v2 sets it too);
//   - ray.io/cluster: KubeRay's RayCluster (RayClusterLabelKey in
//     ray-project/kuberay ray-operator/controllers/ray/utils/constant.go);
//   - batch.kubernetes.io/job-name and its older form job-name: a
//     Kubernetes Job's pods (the Job controller sets both since
//     Kubernetes 1.27).
var JobLabels = []string{
	"training.kubeflow.org/job-name",
	"ray.io/cluster",
	"batch.kubernetes.io/job-name",
	"job-name",
}

// JobFromLabels is the job of a pod known only by its labels (a pod gone
// by the time of the lookup, or no --kubeconfig): the value of the first of
// JobLabels the pod has, else the pod's name. A key matches as Kubernetes
// writes it (training.kubeflow.org/job-name), in Prometheus's sanitised
// form (training_kubeflow_org_job_name: every character outside
// [a-zA-Z0-9_] as _) and in kube-state-metrics' form with the label_ prefix
// (label_training_kubeflow_org_job_name), since series cannot carry the
// Kubernetes form. An empty value counts as absent.
func JobFromLabels(labels map[string]string, pod string) string {
	for _, k := range JobLabels {
		s := sanitise(k)
		for _, key := range []string{k, s, "label_" + s} {
			if v := labels[key]; v != "" {
				return v
			}
		}
	}
	return pod
}

// sanitise writes a label key as a Prometheus label name: each character
// outside [a-zA-Z0-9_] becomes _ (as kube-state-metrics does).
func sanitise(k string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, k)
}
