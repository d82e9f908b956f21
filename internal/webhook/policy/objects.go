// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// Object is a pod, or a workload's pod template, read from a manifest.
type Object struct {
	File string
	// Line is the object's first line in File.
	Line      int
	Kind      string
	Name      string
	Namespace string
	Pod       *Pod
}

// The fields of Kubernetes manifests the policy reads; others are ignored.
type manifest struct {
	Kind     string    `yaml:"kind"`
	Metadata meta      `yaml:"metadata"`
	Spec     specOrTpl `yaml:"spec"`
	Items    []yaml.Node
}

type meta struct {
	Name            string            `yaml:"name"`
	GenerateName    string            `yaml:"generateName"`
	Namespace       string            `yaml:"namespace"`
	Labels          map[string]string `yaml:"labels"`
	OwnerReferences []struct {
		Kind string `yaml:"kind"`
	} `yaml:"ownerReferences"`
}

type template struct {
	Metadata meta    `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type specOrTpl struct {
	podSpec     `yaml:",inline"`
	Template    *template `yaml:"template"`
	JobTemplate *struct {
		Spec struct {
			Template *template `yaml:"template"`
		} `yaml:"spec"`
	} `yaml:"jobTemplate"`
	// Kubeflow training operator jobs: replica type to pod template.
	PyTorch map[string]replica `yaml:"pytorchReplicaSpecs"`
	TF      map[string]replica `yaml:"tfReplicaSpecs"`
	MPI     map[string]replica `yaml:"mpiReplicaSpecs"`
	JAX     map[string]replica `yaml:"jaxReplicaSpecs"`
	// KubeRay: a RayCluster's worker groups, or a RayJob's cluster's.
	WorkerGroups   []replica `yaml:"workerGroupSpecs"`
	RayClusterSpec *struct {
		WorkerGroups []replica `yaml:"workerGroupSpecs"`
	} `yaml:"rayClusterSpec"`
}

type replica struct {
	GroupName string    `yaml:"groupName"`
	Template  *template `yaml:"template"`
}

type podSpec struct {
	SchedulerName string            `yaml:"schedulerName"`
	NodeSelector  map[string]string `yaml:"nodeSelector"`
	Affinity      struct {
		NodeAffinity struct {
			Required struct {
				Terms []struct {
					MatchExpressions []struct {
						Key      string   `yaml:"key"`
						Operator string   `yaml:"operator"`
						Values   []string `yaml:"values"`
					} `yaml:"matchExpressions"`
				} `yaml:"nodeSelectorTerms"`
			} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
		} `yaml:"nodeAffinity"`
	} `yaml:"affinity"`
	Tolerations    []Toleration `yaml:"tolerations"`
	ResourceClaims []Claim      `yaml:"resourceClaims"`
	InitContainers []container  `yaml:"initContainers"`
	Containers     []container  `yaml:"containers"`
}

type container struct {
	Name          string `yaml:"name"`
	RestartPolicy string `yaml:"restartPolicy"`
	Resources     struct {
		Limits   map[string]string `yaml:"limits"`
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
}

// templateKinds are the workload kinds whose pod template is checked.
var templateKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}

// ReadObjects reads the pods and workload pod templates of a YAML or JSON
// manifest (several documents, or a List as `kubectl get -o yaml` prints),
// and the labels of the Namespaces it holds. A pod's resource claims are
// given the spec of the ResourceClaim or ResourceClaimTemplate of the same
// file they name (Claim.Spec). The pod templates of Kubeflow
// training jobs (PyTorchJob, TFJob, MPIJob, JAXJob: one per replica type)
// are training pods, and so are the worker groups of KubeRay's RayCluster
// and RayJob. Objects without a namespace
// are in "default". Other kinds are skipped.
func ReadObjects(file string, data []byte) ([]Object, map[string]map[string]string, error) {
	r, err := readObjects(file, data)
	if err != nil {
		return nil, nil, err
	}
	resolveClaims(r.objs, r.claims)
	return r.objs, r.nsLabels, nil
}

// readObjects is ReadObjects, returning its reader, which also counts the
// documents that were objects, whether or not of a kind checked.
func readObjects(file string, data []byte) (*objectReader, error) {
	r := &objectReader{file: file, nsLabels: map[string]map[string]string{}, claims: map[string]*dra.ClaimSpec{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, yamlx.Syntax(file, err)
		}
		if len(doc.Content) == 0 {
			continue // an empty document
		}
		if top := doc.Content[0]; top.Kind == yaml.ScalarNode && top.Tag == "!!null" && top.Value == "" {
			continue // "---" with nothing or comments only after it (helm template prints these), skipped as kubectl does
		}
		if top := doc.Content[0]; top.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s:%d: a document must be one Kubernetes object (a mapping with kind), not a %s; a list of objects is a kind: List with items", file, top.Line, nodeKind(top))
		}
		r.docs++
		if err := r.add(doc.Content[0]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// objectReader collects the objects of one file.
type objectReader struct {
	file     string
	line     int // of the object being read
	docs     int // documents that are objects (a List counts one)
	objs     []Object
	nsLabels map[string]map[string]string
	// claims are the specs of the ResourceClaims and
	// ResourceClaimTemplates read, by claimKey.
	claims map[string]*dra.ClaimSpec
}

// claimKey keys a ResourceClaim's or ResourceClaimTemplate's spec: kind,
// namespace ("" is "default"), name.
func claimKey(kind, ns, name string) string {
	if ns == "" {
		ns = "default"
	}
	return kind + "/" + ns + "/" + name
}

// resolveClaims gives each claim of objs the spec it names in claims.
func resolveClaims(objs []Object, claims map[string]*dra.ClaimSpec) {
	for _, o := range objs {
		for i := range o.Pod.Claims {
			c := &o.Pod.Claims[i]
			if c.TemplateName != "" {
				c.Spec = claims[claimKey("ResourceClaimTemplate", o.Namespace, c.TemplateName)]
			} else {
				c.Spec = claims[claimKey("ResourceClaim", o.Namespace, c.ClaimName)]
			}
		}
	}
}

// addClaim reads the spec of a ResourceClaim, or a ResourceClaimTemplate's
// spec.spec.
func (r *objectReader) addClaim(n *yaml.Node, m manifest) error {
	var obj struct {
		Spec struct {
			dra.ClaimSpec `yaml:",inline"`
			Spec          dra.ClaimSpec `yaml:"spec"`
		} `yaml:"spec"`
	}
	if err := n.Decode(&obj); err != nil {
		return yamlx.Syntax(r.file, err)
	}
	spec := &obj.Spec.ClaimSpec
	if m.Kind == "ResourceClaimTemplate" {
		spec = &obj.Spec.Spec
	}
	r.claims[claimKey(m.Kind, m.Metadata.Namespace, m.Metadata.Name)] = spec
	return nil
}

// add reads one object (a List's items in turn).
func (r *objectReader) add(n *yaml.Node) error {
	r.line = n.Line
	var m manifest
	if err := n.Decode(&m); err != nil {
		return yamlx.Syntax(r.file, err)
	}
	var tpl *template
	switch {
	case m.Kind == "List" || strings.HasSuffix(m.Kind, "List"):
		for i := range m.Items {
			if err := r.add(&m.Items[i]); err != nil {
				return err
			}
		}
		return nil
	case m.Kind == "Namespace":
		l := map[string]string{"kubernetes.io/metadata.name": m.Metadata.Name}
		for k, v := range m.Metadata.Labels {
			l[k] = v
		}
		r.nsLabels[m.Metadata.Name] = l
		return nil
	case m.Kind == "ResourceClaim" || m.Kind == "ResourceClaimTemplate":
		return r.addClaim(n, m)
	case m.Kind == "Pod":
		tpl = &template{Metadata: m.Metadata, Spec: m.Spec.podSpec}
	case m.Kind == "CronJob" && m.Spec.JobTemplate != nil:
		tpl = m.Spec.JobTemplate.Spec.Template
	case slices.Contains(templateKinds, m.Kind):
		tpl = m.Spec.Template
	}
	if tpl != nil {
		return r.addTemplate(m, "", tpl, "")
	}
	return r.addTraining(m)
}

// addTraining adds a training job's templates: each replica type's or
// worker group's, as the pods the operator creates (owned by the job, or
// labelled ray.io/node-type=worker), named <job>/<replica>.
func (r *objectReader) addTraining(m manifest) error {
	var reps map[string]replica
	switch m.Kind {
	case "PyTorchJob":
		reps = m.Spec.PyTorch
	case "TFJob":
		reps = m.Spec.TF
	case "MPIJob":
		reps = m.Spec.MPI
	case "JAXJob":
		reps = m.Spec.JAX
	case "RayCluster", "RayJob":
		groups := m.Spec.WorkerGroups
		if m.Kind == "RayJob" && m.Spec.RayClusterSpec != nil {
			groups = m.Spec.RayClusterSpec.WorkerGroups
		}
		for _, g := range groups {
			if err := r.addTemplate(m, g.GroupName, g.Template, "worker"); err != nil {
				return err
			}
		}
		return nil
	}
	names := make([]string, 0, len(reps))
	for k := range reps {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if err := r.addTemplate(m, k, reps[k].Template, ""); err != nil {
			return err
		}
	}
	return nil
}

// addTemplate adds the pod template tpl of object m (nil: nothing), named
// <name>/<replica> for a replica, and labelled ray.io/node-type for a Ray
// node type.
func (r *objectReader) addTemplate(m manifest, replica string, tpl *template, rayNodeType string) error {
	if tpl == nil {
		return nil
	}
	pod, err := tpl.pod(r.file, r.line)
	if err != nil {
		return err
	}
	o := Object{File: r.file, Line: r.line, Kind: m.Kind, Name: m.Metadata.Name, Namespace: m.Metadata.Namespace, Pod: pod}
	if o.Name == "" {
		o.Name = m.Metadata.GenerateName
	}
	if replica != "" {
		o.Name += "/" + replica
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	pod.Namespace = o.Namespace
	switch {
	case rayNodeType != "":
		l := map[string]string{"ray.io/node-type": rayNodeType}
		for k, v := range pod.Labels {
			l[k] = v
		}
		pod.Labels = l
	case slices.Contains(TrainingOwners, m.Kind), m.Kind == "DaemonSet":
		pod.Owners = append(pod.Owners, m.Kind) // its pods' owner
	}
	r.objs = append(r.objs, o)
	return nil
}

func (t *template) pod(file string, line int) (*Pod, error) {
	s := &t.Spec
	p := &Pod{Name: t.Metadata.Name, Labels: t.Metadata.Labels, SchedulerName: s.SchedulerName, NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, Claims: s.ResourceClaims}
	for _, o := range t.Metadata.OwnerReferences {
		p.Owners = append(p.Owners, o.Kind)
	}
	for _, term := range s.Affinity.NodeAffinity.Required.Terms {
		for _, e := range term.MatchExpressions {
			if slices.Contains(ModelLabels, e.Key) && e.Operator == "In" {
				p.ModelAffinity = append(p.ModelAffinity, e.Values)
			}
		}
	}
	for i, cs := range [][]container{s.InitContainers, s.Containers} {
		for _, c := range cs {
			res := map[string]int64{}
			for _, m := range []map[string]string{c.Resources.Requests, c.Resources.Limits} {
				for r, q := range m {
					if !resource.IsAccelerator(r) {
						continue
					}
					n, err := strconv.ParseInt(q, 10, 64)
					if err != nil || n < 0 {
						return nil, fmt.Errorf("%s:%d: container %s: %s: %q is not a whole number", file, line, c.Name, r, q)
					}
					res[r] = n
				}
			}
			p.Containers = append(p.Containers, Container{Name: c.Name, Init: i == 0, Sidecar: i == 0 && c.RestartPolicy == "Always", Resources: res})
		}
	}
	return p, nil
}

// Finding is one violation of one object, or a note on it (Note).
type Finding struct {
	Object    Object
	Violation Violation
	// Note, when set, is no violation: what the policy could not know of
	// the object's claims and what it assumed (Pod.Notes).
	Note string
}

func (f Finding) String() string {
	what := f.Violation.String()
	if f.Note != "" {
		what = "note: " + f.Note
	}
	return fmt.Sprintf("%s:%d: %s %s/%s: %s", f.Object.File, f.Object.Line, f.Object.Kind, f.Object.Namespace, f.Object.Name, what)
}

// Stdin is the path that names the standard input in Check, as kubectl's
// "-f -"; findings name it "<stdin>".
const Stdin = "-"

// Check reads the manifests of paths (files, directories walked for
// *.yaml, *.yml and *.json, or Stdin, read from stdin) and validates every
// pod and pod template, with namespaces' labels from the Namespaces among
// them. It returns the findings in file order and the number of objects
// checked. A path that holds no object at all (an empty file, standard
// input with nothing on it, a directory without a manifest or with empty
// ones only) is an error: "no violation" would hide that nothing was read,
// as when the kubectl before the pipe failed. A List without items, as
// kubectl prints where there is nothing of the kind, is an object. A pod's
// claims are read from the ResourceClaims and ResourceClaimTemplates of
// all the paths; after an object's violations come its notes (Finding.Note),
// which are no violations.
func (pol *Policy) Check(paths []string, stdin io.Reader) ([]Finding, int, error) {
	var objs []Object
	nsLabels, claims := map[string]map[string]string{}, map[string]*dra.ClaimSpec{}
	for _, p := range paths {
		files, err := manifestFiles(p)
		if err != nil {
			return nil, 0, err
		}
		docs := 0
		for _, f := range files {
			var data []byte
			if f == Stdin {
				f = "<stdin>"
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(f)
			}
			if err != nil {
				return nil, 0, err
			}
			r, err := readObjects(f, data)
			if err != nil {
				return nil, 0, err
			}
			docs += r.docs
			objs = append(objs, r.objs...)
			for k, v := range r.nsLabels {
				nsLabels[k] = v
			}
			for k, v := range r.claims {
				claims[k] = v
			}
		}
		if docs == 0 {
			name := p
			if p == Stdin {
				name = "<stdin>"
			}
			if len(files) == 0 {
				return nil, 0, fmt.Errorf("no objects in %s: no *.yaml, *.yml or *.json file in it", name)
			}
			return nil, 0, fmt.Errorf("no objects in %s", name)
		}
	}
	resolveClaims(objs, claims)
	var out []Finding
	for _, o := range objs {
		ns := Namespace{Name: o.Namespace, Labels: nsLabels[o.Namespace]}
		if ns.Labels == nil {
			ns.Labels = map[string]string{"kubernetes.io/metadata.name": o.Namespace}
		}
		for _, v := range pol.Validate(o.Pod, ns) {
			out = append(out, Finding{Object: o, Violation: v})
		}
		if !pol.Excluded(ns.Name) {
			for _, n := range o.Pod.Notes() {
				out = append(out, Finding{Object: o, Note: n})
			}
		}
	}
	return out, len(objs), nil
}

// manifestFiles returns the files of one path given to Check: Stdin, the
// file, or a directory's *.yaml, *.yml and *.json files in walk order.
func manifestFiles(p string) ([]string, error) {
	if p == Stdin {
		return []string{p}, nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	var files []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch filepath.Ext(path) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	return files, err
}

// nodeKind names a YAML node's kind for errors.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "sequence"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "mapping"
}
