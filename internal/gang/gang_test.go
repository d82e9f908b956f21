// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package gang

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// objects is a namespace of owners by name, as a Getter reads them.
type objects map[string]*Object

func (os objects) get(r Ref) (*Object, error) {
	o, ok := os[r.Name]
	if !ok {
		return nil, errors.New("not found: " + r.Name)
	}
	return o, nil
}

func spec(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func obj(apiVersion, kind, name string, ctrl *Ref, s map[string]any) *Object {
	return &Object{Ref: Ref{APIVersion: apiVersion, Kind: kind, Name: name, UID: "uid-" + name}, Controller: ctrl, Spec: s}
}

func ref(o *Object) *Ref { r := o.Ref; return &r }

// TestOf: each kind's gang and count, worked out from the specs by hand
// with the rules of KAI-Scheduler's pod grouper (see the package doc).
func TestOf(t *testing.T) {
	ptj := obj("kubeflow.org/v1", "PyTorchJob", "ddp", nil, spec(t, `{"pytorchReplicaSpecs":{"Master":{"replicas":1},"Worker":{"replicas":3}}}`))
	ptjMin := obj("kubeflow.org/v1", "PyTorchJob", "ddp-min", nil, spec(t, `{"runPolicy":{"schedulingPolicy":{"minAvailable":2}},"elasticPolicy":{"minReplicas":3},"pytorchReplicaSpecs":{"Worker":{"replicas":8}}}`))
	ptjElastic := obj("kubeflow.org/v1", "PyTorchJob", "elastic", nil, spec(t, `{"elasticPolicy":{"minReplicas":3},"pytorchReplicaSpecs":{"Worker":{"replicas":8}}}`))
	mpi := obj("kubeflow.org/v2beta1", "MPIJob", "hvd", nil, spec(t, `{"mpiReplicaSpecs":{"Launcher":{"replicas":1},"Worker":{"replicas":4}}}`))
	mpiWait := obj("kubeflow.org/v2beta1", "MPIJob", "hvd-wait", nil, spec(t, `{"launcherCreationPolicy":"WaitForWorkersReady","mpiReplicaSpecs":{"Launcher":{"replicas":1},"Worker":{"replicas":4}}}`))
	launcher := obj("batch/v1", "Job", "hvd-launcher", ref(mpi), spec(t, `{"parallelism":1}`))
	ray := obj("ray.io/v1", "RayCluster", "rc", nil, spec(t, `{"workerGroupSpecs":[{"groupName":"small","replicas":2},{"groupName":"gpu","replicas":4,"minReplicas":2,"numOfHosts":2},{"groupName":"off","replicas":3,"suspend":true}]}`))
	tj := obj("trainer.kubeflow.org/v1alpha1", "TrainJob", "tj", nil, nil)
	tjs := obj("jobset.x-k8s.io/v1alpha2", "JobSet", "tj", ref(tj), spec(t, `{"replicatedJobs":[
		{"name":"model-initializer","replicas":1,"template":{"spec":{"parallelism":1}}},
		{"name":"node","replicas":1,"dependsOn":[{"name":"model-initializer","status":"Complete"}],"template":{"spec":{"parallelism":4,"completions":4}}}]}`))
	tjNode := obj("batch/v1", "Job", "tj-node-0", ref(tjs), nil)
	tjNode.Labels = map[string]string{replicatedJobLabel: "node"}
	tjInit := obj("batch/v1", "Job", "tj-model-initializer-0", ref(tjs), nil)
	tjInit.Labels = map[string]string{replicatedJobLabel: "model-initializer"}
	js := obj("jobset.x-k8s.io/v1alpha2", "JobSet", "js", nil, spec(t, `{"replicatedJobs":[
		{"name":"leader","replicas":1},{"name":"workers","replicas":2,"template":{"spec":{"parallelism":3,"completions":3}}}]}`))
	jsJob := obj("batch/v1", "Job", "js-workers-1", ref(js), nil)
	jsJob.Labels = map[string]string{replicatedJobLabel: "workers"}
	indexed := obj("batch/v1", "Job", "idx", nil, spec(t, `{"completionMode":"Indexed","parallelism":4,"completions":6}`))
	fewer := obj("batch/v1", "Job", "fewer", nil, spec(t, `{"completionMode":"Indexed","parallelism":4,"completions":3}`))
	nonIndexed := obj("batch/v1", "Job", "plain", nil, spec(t, `{"parallelism":4,"completions":4}`))
	single := obj("batch/v1", "Job", "one", nil, spec(t, `{"completionMode":"Indexed","parallelism":1,"completions":8}`))
	optOut := obj("batch/v1", "Job", "out", nil, spec(t, `{"completionMode":"Indexed","parallelism":4}`))
	optOut.Annotations = map[string]string{OptOut: "false"}
	rs := obj("apps/v1", "ReplicaSet", "web", nil, nil)
	all := objects{}
	for _, o := range []*Object{ptj, ptjMin, ptjElastic, mpi, mpiWait, launcher, ray, tj, tjNode, tjInit, js, jsJob, indexed, fewer, nonIndexed, single, optOut, rs} {
		all[o.Name] = o
	}
	all["tj"] = tj // the JobSet shares the TrainJob's name: keep the TrainJob, look the JobSet up below
	get := func(r Ref) (*Object, error) {
		if r.Kind == "JobSet" && r.Name == "tj" {
			return tjs, nil
		}
		return all.get(r)
	}
	worker := map[string]string{rayNodeTypeLabel: "worker", rayNodeGroupLabel: "gpu"}
	for _, c := range []struct {
		name   string
		labels map[string]string
		ctrl   *Object
		want   string // "name min", "" for no gang
	}{
		{"pytorch: master and workers", nil, ptj, "pytorchjob-ddp 4"},
		{"pytorch: minAvailable wins", nil, ptjMin, "pytorchjob-ddp-min 2"},
		{"pytorch: elastic minReplicas", nil, ptjElastic, "pytorchjob-elastic 3"},
		{"mpi: launcher and workers", nil, mpi, "mpijob-hvd 5"},
		{"mpi: launcher after the workers", nil, mpiWait, "mpijob-hvd-wait 4"},
		{"mpi v2: the launcher's Job", nil, launcher, "mpijob-hvd 5"},
		{"ray: worker group minReplicas x hosts", worker, ray, "raycluster-rc-gpu 4"},
		{"ray: group of 2", map[string]string{rayNodeTypeLabel: "worker", rayNodeGroupLabel: "small"}, ray, "raycluster-rc-small 2"},
		{"ray: suspended group", map[string]string{rayNodeTypeLabel: "worker", rayNodeGroupLabel: "off"}, ray, ""},
		{"ray: head", map[string]string{rayNodeTypeLabel: "head", rayNodeGroupLabel: "headgroup"}, ray, ""},
		{"trainjob: node pods, owned by the TrainJob", nil, tjNode, "trainjob-tj 4"},
		{"trainjob: initializer runs first, alone", nil, tjInit, ""},
		{"jobset: 1 leader + 2 x 3 workers", nil, jsJob, "jobset-js 7"},
		{"indexed job", nil, indexed, "job-idx 4"},
		{"indexed job, completions below parallelism", nil, fewer, "job-fewer 3"},
		{"non-indexed job", nil, nonIndexed, ""},
		{"indexed job of parallelism 1", nil, single, ""},
		{"job opted out", nil, optOut, ""},
		{"pod opted out", map[string]string{OptOut: "false"}, indexed, ""},
		{"replicaset", nil, rs, ""},
	} {
		g, err := Of(c.labels, ref(c.ctrl), get)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := ""
		if g != nil {
			got = g.Name + " " + itoa(g.MinCount)
		}
		if got != c.want {
			t.Errorf("%s: gang %q, want %q", c.name, got, c.want)
		}
	}
	// A TrainJob's gang is owned by the TrainJob, so it goes with it.
	if g, _ := Of(nil, ref(tjNode), get); g == nil || g.Owner.Kind != "TrainJob" || g.Owner.UID != "uid-tj" {
		t.Errorf("trainjob gang %+v, want owner TrainJob uid-tj", g)
	}
	if g, err := Of(nil, nil, get); g != nil || err != nil {
		t.Errorf("pod without controller: %+v %v", g, err)
	}
}

func itoa(n int32) string { b, _ := json.Marshal(n); return string(b) }

// TestOfErrors: a spec the rule cannot count is an error naming the job
// and the field; an unreadable owner, the Getter's error.
func TestOfErrors(t *testing.T) {
	for _, c := range []struct {
		o    *Object
		want string
	}{
		{obj("kubeflow.org/v1", "PyTorchJob", "p", nil, map[string]any{}), "PyTorchJob p: spec.pytorchReplicaSpecs: missing"},
		{obj("kubeflow.org/v1", "PyTorchJob", "p", nil, map[string]any{"runPolicy": map[string]any{"schedulingPolicy": map[string]any{"minAvailable": 1.5}}}),
			"PyTorchJob p: runPolicy.schedulingPolicy.minAvailable: 1.5 is not a whole number"},
		{obj("ray.io/v1", "RayCluster", "r", nil, map[string]any{"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": -2.0}}}),
			"RayCluster r: spec.workerGroupSpecs[0]: replicas: -2 out of range 0..2147483647"},
		{obj("ray.io/v1", "RayCluster", "r", nil, map[string]any{}), `RayCluster r: spec.workerGroupSpecs: no group "gpu" (the pod's ray.io/group label)`},
		{obj("batch/v1", "Job", "j", nil, map[string]any{"completionMode": "Indexed", "parallelism": "x"}), `Job j: parallelism: "x" is not a whole number`},
	} {
		_, err := Of(map[string]string{rayNodeTypeLabel: "worker", rayNodeGroupLabel: "gpu"}, ref(c.o), objects{c.o.Name: c.o}.get)
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	_, err := Of(nil, &Ref{APIVersion: "batch/v1", Kind: "Job", Name: "gone"}, objects{}.get)
	if err == nil || !strings.Contains(err.Error(), "not found: gone") {
		t.Errorf("unreadable owner: %v", err)
	}
}

// TestObjectName: a byte a DNS name cannot hold becomes '-'; a name over 253 bytes is cut to 242, '-' and 10 digits
// of a hash, so it stays a valid name and two long ones differ.
func TestObjectName(t *testing.T) {
	if n := objectName("job-a", "u"); n != "job-a" {
		t.Errorf("short name %q", n)
	}
	if n := objectName("raycluster-rc-gpu_a", "u"); n != "raycluster-rc-gpu-a" {
		t.Errorf("name with '_': %q, want raycluster-rc-gpu-a", n)
	}
	long := "job-" + strings.Repeat("a", 300)
	a, b := objectName(long, "u1"), objectName(long, "u2")
	if len(a) != 253 || a[:242] != long[:242] || a[242] != '-' || a == b {
		t.Errorf("long names %q (%d) and %q", a, len(a), b)
	}
}
