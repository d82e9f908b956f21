// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package owners

import "testing"

func TestJobFromLabels(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"none", nil, "pod-1"},
		{"other labels", map[string]string{"app": "web"}, "pod-1"},
		{"job", map[string]string{"job-name": "train"}, "train"},
		{"batch job", map[string]string{"batch.kubernetes.io/job-name": "train", "job-name": "old"}, "train"},
		// A PyTorchJob's pod: the training operator's label wins over a
		// Job's (in the order of JobLabels).
		{"kubeflow", map[string]string{"training.kubeflow.org/job-name": "bert", "job-name": "x"}, "bert"},
		{"ray", map[string]string{"ray.io/cluster": "rc", "job-name": "submitter"}, "rc"},
		{"empty value", map[string]string{"training.kubeflow.org/job-name": "", "job-name": "train"}, "train"},
		// As Prometheus series carry them.
		{"sanitised", map[string]string{"training_kubeflow_org_job_name": "bert"}, "bert"},
		{"kube-state-metrics", map[string]string{"label_ray_io_cluster": "rc"}, "rc"},
		{"ksm job", map[string]string{"label_job_name": "train"}, "train"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := JobFromLabels(c.labels, "pod-1"); got != c.want {
				t.Errorf("JobFromLabels(%v) = %q, want %q", c.labels, got, c.want)
			}
		})
	}
}

func TestSanitise(t *testing.T) {
	if got := sanitise("batch.kubernetes.io/job-name"); got != "batch_kubernetes_io_job_name" {
		t.Errorf("sanitise = %q", got)
	}
}
