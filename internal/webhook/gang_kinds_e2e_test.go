// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// schedulerProc is a running gpuplane-scheduler: its log file, and a
// channel closed when it exits.
type schedulerProc struct {
	log    string
	exited chan struct{}
}

// logSays waits until the scheduler's log holds s; it fails the test if
// the scheduler exits first, or after 2 minutes.
func (p *schedulerProc) logSays(t *testing.T, s string) {
	t.Helper()
	poll(t, "scheduler log: "+s, func() (bool, error) {
		b, _ := os.ReadFile(p.log)
		if strings.Contains(string(b), s) {
			return true, nil
		}
		select {
		case <-p.exited:
			return false, fmt.Errorf("the scheduler exited:\n%s", b)
		default:
			return false, nil
		}
	})
}

// startScheduler builds gpuplane-scheduler and runs it with the shipped
// configuration (deploy/scheduler/config.yaml), no leader election,
// best-fit with tie-break first, and with gate the GenericWorkload gate
// on. It is killed at the end of the test.
func startScheduler(t *testing.T, c *kube.Cluster, gate bool) *schedulerProc {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpuplane-scheduler")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/gpuplane/gpuplane/cmd/gpuplane-scheduler").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := os.ReadFile("../../deploy/scheduler/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var conf map[string]any
	if err := yaml.Unmarshal(b, &conf); err != nil {
		t.Fatal(err)
	}
	conf["clientConnection"] = map[string]any{"kubeconfig": c.Kubeconfig, "qps": 1000, "burst": 2000}
	conf["leaderElection"] = map[string]any{"leaderElect": false}
	conf["profiles"].([]any)[0].(map[string]any)["pluginConfig"] = []any{map[string]any{"name": "GPUPlacement", "args": map[string]any{"policy": "bestfit", "tieBreak": "first"}}}
	if b, err = yaml.Marshal(conf); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &schedulerProc{log: filepath.Join(dir, "scheduler.log"), exited: make(chan struct{})}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfg, "--secure-port=0", "-v=2"}
	if gate {
		args = append(args, "--feature-gates=GenericWorkload=true")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); logf.Close(); close(p.exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			lines := strings.Split(string(b), "\n")
			t.Logf("scheduler log (tail):\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return p
}

// template is a pod template asking gpus GPUs of model, scheduled by
// scheduler.
func template(gpus int, model, scheduler string) map[string]any {
	res := map[string]any{"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": fmt.Sprint(gpus)}
	return map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{"gpuplane.io/gpu-model": model}},
		"spec": map[string]any{"schedulerName": scheduler, "restartPolicy": "Never",
			"tolerations": []any{map[string]any{"key": kube.KwokAnnotation, "operator": "Exists", "effect": "NoSchedule"}},
			"containers":  []any{map[string]any{"name": "c", "image": "busybox", "resources": map[string]any{"requests": res, "limits": res}}}},
	}
}

// indexedJob is a batch/v1 Job spec of n pods at once.
func indexedJob(n int, tmpl map[string]any) map[string]any {
	return map[string]any{"completionMode": "Indexed", "parallelism": n, "completions": n, "template": tmpl}
}

// pytorchJob creates a PyTorchJob of a master and workers, and its pods
// as training-operator v1.9 makes them (pkg/controller.v1/common/pod.go:
// names <job>-<type>-<index>, the training.kubeflow.org labels, the job
// as controller).
func (e *gangEnv) pytorchJob(t *testing.T, name string, workers, gpus int, model string) {
	tmpl := template(gpus, model, "gpuplane")
	job := e.create(t, "kubeflow.org/v1", "PyTorchJob", name, nil, map[string]any{"pytorchReplicaSpecs": map[string]any{
		"Master": map[string]any{"replicas": 1, "template": tmpl},
		"Worker": map[string]any{"replicas": workers, "template": tmpl},
	}}, nil)
	for i := -1; i < workers; i++ {
		typ, idx := "worker", i
		if i < 0 {
			typ, idx = "master", 0
		}
		labels := map[string]string{"training.kubeflow.org/job-name": name, "training.kubeflow.org/operator-name": "pytorchjob-controller",
			"training.kubeflow.org/replica-type": typ, "training.kubeflow.org/replica-index": fmt.Sprint(idx)}
		if typ == "master" {
			labels["training.kubeflow.org/job-role"] = "master"
		}
		e.createPod(t, podOpts{name: fmt.Sprintf("%s-%s-%d", name, typ, idx), owner: job, labels: labels, gpus: int64(gpus), model: model, scheduler: "gpuplane"})
	}
}

// jobSet creates a JobSet of one replicated job "workers" (an indexed Job
// of n pods) and its Job as JobSet v0.10 makes it (<jobset>-<rjob>-0, the
// jobset.sigs.k8s.io labels, the JobSet as controller); the Job
// controller makes the pods.
func (e *gangEnv) jobSet(t *testing.T, name string, owner *unstructured.Unstructured, n, gpus int, model, scheduler string) {
	tmpl := template(gpus, model, scheduler)
	js := e.create(t, "jobset.x-k8s.io/v1alpha2", "JobSet", name, owner, map[string]any{"replicatedJobs": []any{
		map[string]any{"name": "workers", "replicas": 1, "template": map[string]any{"spec": indexedJob(n, tmpl)}},
	}}, nil)
	labels := map[string]string{"jobset.sigs.k8s.io/jobset-name": name, "jobset.sigs.k8s.io/replicatedjob-name": "workers",
		"jobset.sigs.k8s.io/replicatedjob-replicas": "1", "jobset.sigs.k8s.io/job-index": "0"}
	e.create(t, "batch/v1", "Job", name+"-workers-0", js, indexedJob(n, tmpl), labels)
}

// podsOf lists the pods in default whose name starts with prefix.
func (e *gangEnv) podsOf(t *testing.T, prefix string) []corev1.Pod {
	t.Helper()
	pods, err := e.c.Client.CoreV1().Pods("default").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, prefix) && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// gang checks that the pods starting with prefix are n, all in PodGroup
// group, and that the group and its Workload ask for min pods and are
// owned by the job ownerKind; it returns how many are bound.
func (e *gangEnv) gang(t *testing.T, prefix, group string, n int, min int32, ownerKind string) int {
	t.Helper()
	var pods []corev1.Pod
	poll(t, fmt.Sprintf("%d pods %s*", n, prefix), func() (bool, error) {
		pods = e.podsOf(t, prefix)
		return len(pods) == n, nil
	})
	bound := 0
	for _, p := range pods {
		if g := groupOf(&p); g != group {
			t.Errorf("pod %s: scheduling group %q, want %q", p.Name, g, group)
		}
		if p.Spec.NodeName != "" {
			bound++
		}
	}
	pg, err := e.c.Client.SchedulingV1beta1().PodGroups("default").Get(t.Context(), group, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("podgroup %s: %v", group, err)
	}
	wl, err := e.c.Client.SchedulingV1beta1().Workloads("default").Get(t.Context(), group, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("workload %s: %v", group, err)
	}
	if g := pg.Spec.SchedulingPolicy.Gang; g == nil || g.MinCount != min {
		t.Errorf("podgroup %s: gang %+v, want minCount %d", group, g, min)
	}
	if g := wl.Spec.PodGroupTemplates[0].SchedulingPolicy.Gang; g == nil || g.MinCount != min {
		t.Errorf("workload %s: gang %+v, want minCount %d", group, g, min)
	}
	if o := pg.OwnerReferences; len(o) != 2 || o[0].Kind != ownerKind || o[1].Kind != "Workload" || o[1].UID != wl.UID {
		t.Errorf("podgroup %s: owners %+v, want the %s and the Workload", group, o, ownerKind)
	}
	if o := wl.OwnerReferences; len(o) != 1 || o[0].Kind != ownerKind || wl.Spec.ControllerRef == nil || wl.Spec.ControllerRef.Kind != ownerKind {
		t.Errorf("workload %s: owners %+v, controllerRef %+v, want the %s", group, o, wl.Spec.ControllerRef, ownerKind)
	}
	return bound
}

// TestGangKinds: the webhook groups the pods of each kind of training job
// as its operator makes them, with the count worked out by hand; opt-outs
// get no group; deleting the job deletes its Workload and PodGroup. Pods
// here are scheduled by no one (schedulerName "none").
func TestGangKinds(t *testing.T) {
	e := startGangEnv(t, nil)
	// TrainJob (trainer v2): its JobSet is named after it, owned by it.
	tj := e.create(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", "tj", nil, map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}, "trainer": map[string]any{"numNodes": 3}}, nil)
	e.jobSet(t, "tj", tj, 3, 1, "T4", "none")
	e.gang(t, "tj-workers-0-", "trainjob-tj", 3, 3, "TrainJob")

	e.create(t, "batch/v1", "Job", "idx", nil, indexedJob(3, template(1, "T4", "none")), nil)
	e.gang(t, "idx-", "job-idx", 3, 3, "Job")

	// Ray: the worker group is the gang (2 replicas x 2 hosts), the head
	// is alone. Pods as KubeRay v1.5 makes them (ray.io labels).
	tmpl := template(1, "T4", "none")
	rc := e.create(t, "ray.io/v1", "RayCluster", "rc", nil, map[string]any{
		"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": tmpl},
		"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": 2, "minReplicas": 2, "maxReplicas": 2, "numOfHosts": 2, "rayStartParams": map[string]any{}, "template": tmpl}},
	}, nil)
	e.createPod(t, podOpts{name: "rc-head-x7k2p", owner: rc, labels: map[string]string{"ray.io/cluster": "rc", "ray.io/node-type": "head", "ray.io/group": "headgroup"}, scheduler: "none"})
	for i := range 4 {
		e.createPod(t, podOpts{name: fmt.Sprintf("rc-gpu-worker-%d", i), owner: rc, labels: map[string]string{"ray.io/cluster": "rc", "ray.io/node-type": "worker", "ray.io/group": "gpu"}, gpus: 1, scheduler: "none"})
	}
	e.gang(t, "rc-gpu-worker-", "raycluster-rc-gpu", 4, 4, "RayCluster")
	if head := e.podsOf(t, "rc-head-"); len(head) != 1 || groupOf(&head[0]) != "" {
		t.Errorf("ray head %+v: want one pod, in no group", head)
	}

	// Opt-out on the job: its pods get no group, and no PodGroup exists.
	e.create(t, "batch/v1", "Job", "solo", nil, indexedJob(2, template(1, "T4", "none")), map[string]string{"gpuplane.io/gang": "false"})
	poll(t, "2 pods solo-*", func() (bool, error) { return len(e.podsOf(t, "solo-")) == 2, nil })
	for _, p := range e.podsOf(t, "solo-") {
		if g := groupOf(&p); g != "" {
			t.Errorf("opted-out pod %s in group %q", p.Name, g)
		}
	}
	if _, err := e.c.Client.SchedulingV1beta1().PodGroups("default").Get(t.Context(), "job-solo", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("podgroup job-solo of an opted-out job: %v, want not found", err)
	}

	// The job's deletion deletes its gang (the garbage collector).
	e.deleteJob(t, "trainer.kubeflow.org/v1alpha1", "TrainJob", "tj")
	poll(t, "workload and podgroup trainjob-tj deleted", func() (bool, error) {
		_, err1 := e.c.Client.SchedulingV1beta1().Workloads("default").Get(t.Context(), "trainjob-tj", metav1.GetOptions{})
		_, err2 := e.c.Client.SchedulingV1beta1().PodGroups("default").Get(t.Context(), "trainjob-tj", metav1.GetOptions{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), nil
	})
}

// TestGangsScheduled: gpuplane-scheduler with the shipped profile on
// four V100 nodes of one GPU and four T4 nodes of two GPUs in alternating
// racks.
//   - a PyTorchJob (master and 3 workers) and a JobSet (an indexed Job of
//     4), one GPU a pod, created together, need 8 of the 4 V100 GPUs: one
//     binds whole, the other not at all, and binds whole when the first is
//     deleted;
//   - an MPIJob (launcher Job of 1 pod asking 2 GPUs, which no V100 node
//     has, and 2 workers of 1) binds nothing, though 2 of its 3 pods fit;
//   - a RayCluster worker group of two 2-GPU T4 pods stays in one rack:
//     best-fit with tie-break first alone puts the second pod on t1, in
//     the other rack.
func TestGangsScheduled(t *testing.T) {
	var nodes []kube.Node
	for i := range 4 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("g%d", i), CPUMilli: 16000, MemoryMiB: 64 << 10, GPUs: 1, Model: "V100M32"})
	}
	for i := range 4 {
		nodes = append(nodes, kube.Node{Name: fmt.Sprintf("t%d", i), CPUMilli: 16000, MemoryMiB: 64 << 10, GPUs: 2, Model: "T4",
			Labels: map[string]string{"topology.kubernetes.io/rack": fmt.Sprintf("r%d", i%2+1)}})
	}
	e := startGangEnv(t, nodes)
	sched := startScheduler(t, e.c, true)
	defer func() {
		// The shipped configuration with the gate on, the API served: the
		// scheduler never says gangs are off.
		if b, _ := os.ReadFile(sched.log); strings.Contains(string(b), "gangs off") {
			t.Errorf("the scheduler says gangs are off with the Workload API served:\n%s", b)
		}
	}()

	// Locality: a Ray worker group.
	tmpl := template(2, "T4", "gpuplane")
	rc := e.create(t, "ray.io/v1", "RayCluster", "rc", nil, map[string]any{
		"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": template(0, "T4", "none")},
		"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": 2, "minReplicas": 2, "maxReplicas": 2, "rayStartParams": map[string]any{}, "template": tmpl}},
	}, nil)
	for i := range 2 {
		e.createPod(t, podOpts{name: fmt.Sprintf("rc-gpu-worker-%d", i), owner: rc, labels: map[string]string{"ray.io/cluster": "rc", "ray.io/node-type": "worker", "ray.io/group": "gpu"},
			gpus: 2, model: "T4", scheduler: "gpuplane"})
	}
	poll(t, "ray worker group bound", func() (bool, error) {
		return e.gang(t, "rc-gpu-worker-", "raycluster-rc-gpu", 2, 2, "RayCluster") == 2, nil
	})
	racks := map[string]bool{}
	for _, p := range e.podsOf(t, "rc-gpu-worker-") {
		n, err := e.c.Client.CoreV1().Nodes().Get(t.Context(), p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		racks[n.Labels["topology.kubernetes.io/rack"]] = true
		t.Logf("%s on %s (rack %s)", p.Name, n.Name, n.Labels["topology.kubernetes.io/rack"])
	}
	if len(racks) != 1 {
		t.Errorf("ray worker group spread over racks %v, want one", racks)
	}

	// Two gangs that do not fit together.
	e.pytorchJob(t, "ddp", 3, 1, "V100M32")
	e.jobSet(t, "js", nil, 4, 1, "V100M32", "gpuplane")
	type gangOf struct {
		prefix, group, kind, apiVersion, job string
	}
	a := gangOf{"ddp-", "pytorchjob-ddp", "PyTorchJob", "kubeflow.org/v1", "ddp"}
	b := gangOf{"js-workers-0-", "jobset-js", "JobSet", "jobset.x-k8s.io/v1alpha2", "js"}
	var first, second gangOf
	poll(t, "one gang bound", func() (bool, error) {
		na, nb := e.gang(t, a.prefix, a.group, 4, 4, a.kind), e.gang(t, b.prefix, b.group, 4, 4, b.kind)
		switch {
		case na == 4:
			first, second = a, b
		case nb == 4:
			first, second = b, a
		default:
			return false, nil
		}
		return true, nil
	})
	// The other stays whole outside: give the scheduler a moment to
	// (wrongly) bind part of it, then check none is bound.
	time.Sleep(2 * time.Second)
	if n1, n2 := e.gang(t, first.prefix, first.group, 4, 4, first.kind), e.gang(t, second.prefix, second.group, 4, 4, second.kind); n1 != 4 || n2 != 0 {
		t.Fatalf("bound: %s %d, %s %d; want 4 and 0", first.group, n1, second.group, n2)
	}
	e.deleteJob(t, first.apiVersion, first.kind, first.job)
	poll(t, second.group+" bound whole after "+first.job+" ends", func() (bool, error) {
		return len(e.podsOf(t, first.prefix)) == 0 && e.gang(t, second.prefix, second.group, 4, 4, second.kind) == 4, nil
	})
	e.deleteJob(t, second.apiVersion, second.kind, second.job)
	poll(t, second.job+"'s pods gone", func() (bool, error) { return len(e.podsOf(t, second.prefix)) == 0, nil })

	// A gang with a pod that fits nowhere: MPIJob v2beta1 (mpi-operator
	// v0.7: the launcher is a Job of the MPIJob; workers are its pods).
	wtmpl := template(1, "V100M32", "gpuplane")
	mpi := e.create(t, "kubeflow.org/v2beta1", "MPIJob", "hvd", nil, map[string]any{"mpiReplicaSpecs": map[string]any{
		"Launcher": map[string]any{"replicas": 1, "template": template(2, "V100M32", "gpuplane")},
		"Worker":   map[string]any{"replicas": 2, "template": wtmpl},
	}}, nil)
	e.create(t, "batch/v1", "Job", "hvd-launcher", mpi, map[string]any{"template": template(2, "V100M32", "gpuplane")},
		map[string]string{"training.kubeflow.org/job-name": "hvd", "training.kubeflow.org/job-role": "launcher"})
	for i := range 2 {
		e.createPod(t, podOpts{name: fmt.Sprintf("hvd-worker-%d", i), owner: mpi, gpus: 1, model: "V100M32", scheduler: "gpuplane",
			labels: map[string]string{"training.kubeflow.org/job-name": "hvd", "training.kubeflow.org/job-role": "worker", "training.kubeflow.org/replica-index": fmt.Sprint(i)}})
	}
	poll(t, "the MPIJob's pods found unschedulable", func() (bool, error) {
		pods := append(e.podsOf(t, "hvd-launcher-"), e.podsOf(t, "hvd-worker-")...)
		for _, p := range pods {
			if unschedulable(&p) {
				return len(pods) == 3, nil
			}
		}
		return false, nil
	})
	time.Sleep(2 * time.Second)
	n := e.gang(t, "hvd-launcher-", "mpijob-hvd", 1, 3, "MPIJob") + e.gang(t, "hvd-worker-", "mpijob-hvd", 2, 3, "MPIJob")
	if n != 0 {
		t.Errorf("MPIJob with a launcher that fits nowhere: %d pods bound, want 0", n)
	}
}

// unschedulable is whether the pod has PodScheduled=False.
func unschedulable(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return true
		}
	}
	return false
}
