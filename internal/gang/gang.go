// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package gang is gpuplane's one rule for which pods of a training job
// form a gang and how many of them must be placed together: for a pod
// whose controller chain leads to a Kubeflow PyTorchJob or MPIJob, a
// Kubeflow TrainJob (through its JobSet), a JobSet, a RayCluster's worker
// group or an indexed batch/v1 Job, it names the gang, its owner and its
// minimum count. gpuplane-webhook turns a gang into a Workload and a
// PodGroup through internal/gang/workload, which reads the controller
// chain from the API server. It imports the standard library only, and
// reads owners through a Getter, never a client. (gpuplane simulate does
// not use it: its --gangs reads gangs from pod names, NAME#i.)
//
// The counts follow KAI-Scheduler's pod grouper (NVIDIA/KAI-Scheduler
// pkg/podgrouper/podgrouper/plugins: kubeflow/distributed_common.go,
// kubeflow/pytorch/pytorch_grouper.go, kubeflow/mpi/mpi-grouper.go,
// ray/ray_grouper.go), and for an indexed Job the Job controller's
// (k8s.io/kubernetes v1.37.2 pkg/api/job/util.go defaultMinCountForJob).
package gang

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// OptOut is the label or annotation that, set to "false" on a namespace,
// a job (any object of the pod's controller chain) or a pod (its
// template), keeps those pods out of gangs: they are scheduled one by one.
const OptOut = "gpuplane.io/gang"

// Ref names an object in the pod's namespace.
type Ref struct {
	APIVersion, Kind, Name, UID string
}

// Group returns the API group of the reference's apiVersion ("" for the
// core group).
func (r Ref) Group() string {
	if k := strings.IndexByte(r.APIVersion, '/'); k >= 0 {
		return r.APIVersion[:k]
	}
	return ""
}

// Object is what the rule reads of an owner: its reference, labels,
// annotations, its own controller (nil: none) and its spec as decoded
// JSON (encoding/json's map[string]any).
type Object struct {
	Ref
	Labels, Annotations map[string]string
	Controller          *Ref
	Spec                map[string]any
}

// Gang is the group of a pod.
type Gang struct {
	// Owner is the job whose deletion deletes the group.
	Owner Ref
	// Name is the Workload's and PodGroup's name, a DNS subdomain, the
	// same for every pod of the gang.
	Name string
	// MinCount is the number of the gang's pods that must be placed
	// together, at least 2.
	MinCount int32
}

// Getter reads an owner by reference; an error stops the rule.
type Getter func(Ref) (*Object, error)

// maxDepth bounds the walk up a controller chain: Job, JobSet, TrainJob
// above a pod.
const maxDepth = 4

// Of returns the gang of a pod with the given labels and controller, or
// nil when it is in none (no training job above it, a job of one pod, an
// opt-out, a RayCluster's head). An owner that cannot be read, or a job
// whose spec says nothing the rule can count, is an error naming it.
func Of(podLabels map[string]string, controller *Ref, get Getter) (*Gang, error) {
	if podLabels[OptOut] == "false" || controller == nil {
		return nil, nil
	}
	var chain []*Object
	for ref := controller; ref != nil && len(chain) < maxDepth; {
		o, err := get(*ref)
		if err != nil {
			return nil, err
		}
		if o == nil {
			return nil, nil
		}
		if o.Labels[OptOut] == "false" || o.Annotations[OptOut] == "false" {
			return nil, nil
		}
		chain = append(chain, o)
		if !passThrough(o) {
			break
		}
		ref = o.Controller
	}
	return decide(chain, podLabels)
}

// passThrough is whether the rule looks at the object's controller: a
// Job under a JobSet or an MPIJob, a JobSet under a TrainJob.
func passThrough(o *Object) bool {
	if o.Controller == nil {
		return false
	}
	c := o.Controller
	switch {
	case o.Group() == "batch" && o.Kind == "Job":
		// A JobSet's Jobs; an MPIJob's launcher, a Job in mpi-operator v2.
		return (c.Group() == "jobset.x-k8s.io" && c.Kind == "JobSet") || (c.Group() == "kubeflow.org" && c.Kind == "MPIJob")
	case o.Group() == "jobset.x-k8s.io" && o.Kind == "JobSet":
		return c.Group() == "trainer.kubeflow.org" && c.Kind == "TrainJob"
	}
	return false
}

// decide reads the chain walked from the pod up: the last object is the
// job that names the gang.
func decide(chain []*Object, podLabels map[string]string) (*Gang, error) {
	if len(chain) == 0 {
		return nil, nil
	}
	top := chain[len(chain)-1]
	var n int64
	var err error
	name := top.Kind + "-" + top.Name
	switch top.Group() + "/" + top.Kind {
	case "kubeflow.org/PyTorchJob":
		n, err = pytorchMin(top)
	case "kubeflow.org/MPIJob":
		n, err = mpiMin(top)
	case "ray.io/RayCluster":
		group, ok := rayWorkerGroup(podLabels)
		if !ok {
			return nil, nil
		}
		name += "-" + group
		n, err = rayMin(top, group)
	case "batch/Job":
		n, err = indexedMin(top)
	case "jobset.x-k8s.io/JobSet", "trainer.kubeflow.org/TrainJob":
		js := chain[len(chain)-1]
		if top.Kind == "TrainJob" {
			js = chain[len(chain)-2]
		}
		var job *Object
		if len(chain) >= 2 && chain[0].Kind == "Job" {
			job = chain[0]
		}
		n, err = jobsetMin(js, job)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", top.Kind, top.Name, err)
	}
	if n < 2 {
		return nil, nil
	}
	if n > 1<<31-1 {
		return nil, fmt.Errorf("%s %s: gang of %d pods is over 2^31-1", top.Kind, top.Name, n)
	}
	return &Gang{Owner: top.Ref, Name: objectName(strings.ToLower(name), top.UID), MinCount: int32(n)}, nil
}

// objectName returns s as a DNS subdomain: a byte other than a-z, 0-9,
// '-' and '.' becomes '-' (a Ray group "GPU_A" is "gpu-a"; s is
// lower-cased already), and a name over 253 bytes is cut to its first 242,
// '-' and 10 digits of a hash of s and uid, so that two long names do not
// meet.
func objectName(s, uid string) string {
	const max = 253
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	s = strings.Trim(string(b), "-.")
	if len(s) <= max {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	h.Write([]byte(uid))
	return strings.TrimRight(s[:max-11], "-.") + "-" + fmt.Sprintf("%010d", h.Sum32())
}

// minAvailable is runPolicy.schedulingPolicy.minAvailable, the count a
// Kubeflow job declares for gang schedulers (Volcano, scheduler-plugins).
func minAvailable(spec map[string]any) (int64, bool, error) {
	return integer(spec, "runPolicy", "schedulingPolicy", "minAvailable")
}

// sumReplicas adds the replicas of each replica spec under key (a spec
// without replicas counts 1, the operators' default).
func sumReplicas(spec map[string]any, key string) (int64, error) {
	specs, ok := spec[key].(map[string]any)
	if !ok {
		return 0, fmt.Errorf("spec.%s: missing", key)
	}
	var total int64
	for role := range specs {
		r, found, err := integer(specs, role, "replicas")
		if err != nil {
			return 0, fmt.Errorf("spec.%s: %w", key, err)
		}
		if !found {
			r = 1
		}
		total += r
	}
	return total, nil
}

// pytorchMin: minAvailable when declared, else elasticPolicy.minReplicas,
// else every replica (Master and Worker), as KAI's PyTorchJob grouper.
func pytorchMin(o *Object) (int64, error) {
	if n, ok, err := minAvailable(o.Spec); ok || err != nil {
		return n, err
	}
	if n, ok, err := integer(o.Spec, "elasticPolicy", "minReplicas"); ok || err != nil {
		return n, err
	}
	return sumReplicas(o.Spec, "pytorchReplicaSpecs")
}

// mpiMin: minAvailable when declared, else Launcher and Worker replicas;
// with launcherCreationPolicy WaitForWorkersReady the launcher is created
// only once the workers run, so the gang is the workers (KAI's MPIJob
// grouper counts the launcher out while it does not exist).
func mpiMin(o *Object) (int64, error) {
	if n, ok, err := minAvailable(o.Spec); ok || err != nil {
		return n, err
	}
	if p, _ := o.Spec["launcherCreationPolicy"].(string); p == "WaitForWorkersReady" {
		n, found, err := integer(o.Spec, "mpiReplicaSpecs", "Worker", "replicas")
		if !found && err == nil {
			n = 1
		}
		return n, err
	}
	return sumReplicas(o.Spec, "mpiReplicaSpecs")
}

// Labels KubeRay puts on a RayCluster's pods (ray-operator
// controllers/ray/utils/constant.go).
const (
	rayNodeTypeLabel  = "ray.io/node-type"
	rayNodeGroupLabel = "ray.io/group"
)

// rayWorkerGroup returns the pod's worker group; false for a head pod.
func rayWorkerGroup(podLabels map[string]string) (string, bool) {
	if podLabels[rayNodeTypeLabel] != "worker" || podLabels[rayNodeGroupLabel] == "" {
		return "", false
	}
	return podLabels[rayNodeGroupLabel], true
}

// rayMin is the worker group's count: minReplicas when above 0, else
// replicas, times numOfHosts (KAI's Ray grouper, after KubeRay's Volcano
// integration); a suspended group counts 0.
func rayMin(o *Object, group string) (int64, error) {
	groups, _ := o.Spec["workerGroupSpecs"].([]any)
	for i, g := range groups {
		m, _ := g.(map[string]any)
		if name, _ := m["groupName"].(string); name != group {
			continue
		}
		if s, _ := m["suspend"].(bool); s {
			return 0, nil
		}
		at := fmt.Sprintf("spec.workerGroupSpecs[%d]", i)
		replicas, _, err := integer(m, "replicas")
		if err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		}
		if mr, _, err := integer(m, "minReplicas"); err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		} else if mr > 0 {
			replicas = mr
		}
		hosts, found, err := integer(m, "numOfHosts")
		if err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		}
		if !found {
			hosts = 1
		}
		return replicas * hosts, nil
	}
	return 0, fmt.Errorf("spec.workerGroupSpecs: no group %q (the pod's %s label)", group, rayNodeGroupLabel)
}

// indexedMin: an Indexed Job runs min(parallelism, completions) pods at
// once; any other Job is no gang. The Job controller's own gang
// (WorkloadWithJob, alpha) defaults minCount to parallelism.
func indexedMin(o *Object) (int64, error) {
	if m, _ := o.Spec["completionMode"].(string); m != "Indexed" {
		return 0, nil
	}
	p, found, err := integer(o.Spec, "parallelism")
	if err != nil {
		return 0, err
	}
	if !found {
		p = 1
	}
	if c, found, err := integer(o.Spec, "completions"); err != nil {
		return 0, err
	} else if found && c < p {
		p = c
	}
	return p, nil
}

// JobSet labels (sigs.k8s.io/jobset api/jobset/v1alpha2 jobset_types.go).
const replicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name"

// jobsetMin counts the pods of a JobSet's replicated jobs that no other
// depends on (spec.replicatedJobs[].dependsOn): replicas times the Job
// template's parallelism (default 1). A replicated job that another
// depends on runs before it (a TrainJob's dataset and model initializers)
// and is no part of the gang: 0 for a pod of its Job.
func jobsetMin(js, job *Object) (int64, error) {
	rjs, _ := js.Spec["replicatedJobs"].([]any)
	if len(rjs) == 0 {
		return 0, fmt.Errorf("spec.replicatedJobs: missing")
	}
	dependedOn := map[string]bool{}
	for _, r := range rjs {
		m, _ := r.(map[string]any)
		deps, _ := m["dependsOn"].([]any)
		for _, d := range deps {
			dm, _ := d.(map[string]any)
			if n, _ := dm["name"].(string); n != "" {
				dependedOn[n] = true
			}
		}
	}
	if job != nil && dependedOn[job.Labels[replicatedJobLabel]] {
		return 0, nil
	}
	var total int64
	for i, r := range rjs {
		m, _ := r.(map[string]any)
		if n, _ := m["name"].(string); dependedOn[n] {
			continue
		}
		at := fmt.Sprintf("spec.replicatedJobs[%d]", i)
		replicas, found, err := integer(m, "replicas")
		if err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		}
		if !found {
			replicas = 1
		}
		par, found, err := integer(m, "template", "spec", "parallelism")
		if err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		}
		if !found {
			par = 1
		}
		if c, found, err := integer(m, "template", "spec", "completions"); err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		} else if found && c < par {
			par = c
		}
		total += replicas * par
	}
	return total, nil
}

// integer reads a whole number at path: found false when a map on the
// path or the value is absent; an error for a value that is not a whole
// number in 0..2^31-1, naming the path.
func integer(m map[string]any, path ...string) (int64, bool, error) {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok || mm == nil {
			return 0, false, nil
		}
		if v, ok = mm[k]; !ok || v == nil {
			return 0, false, nil
		}
	}
	var n int64
	switch x := v.(type) {
	case float64:
		if x != float64(int64(x)) {
			return 0, true, fmt.Errorf("%s: %v is not a whole number", strings.Join(path, "."), x)
		}
		n = int64(x)
	case int64:
		n = x
	case int:
		n = int64(x)
	case string:
		p, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, true, fmt.Errorf("%s: %q is not a whole number", strings.Join(path, "."), x)
		}
		n = p
	default:
		return 0, true, fmt.Errorf("%s: %v is not a number", strings.Join(path, "."), v)
	}
	if n < 0 || n > 1<<31-1 {
		return 0, true, fmt.Errorf("%s: %d out of range 0..2147483647", strings.Join(path, "."), n)
	}
	return n, true, nil
}
