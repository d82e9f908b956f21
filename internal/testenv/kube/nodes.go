// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// PodsPerNode is each fake node's pod capacity, the kubelet's default
// --max-pods.
const PodsPerNode = 110

// Node is one fake GPU node.
type Node struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// GPUs of model Model ("" with no GPUs), e.g. "V100M16".
	GPUs  int
	Model string
	// Accelerator, when set, is another vendor's device plugin's
	// resource (amd.com/gpu, habana.ai/gaudi): the node advertises GPUs
	// of it, and none of NVIDIA's resources or labels; Labels then give
	// what that vendor's components label.
	Accelerator string
	// Labels are added to (and override) the generated labels.
	Labels map[string]string
}

// ReadNodesFile reads fake nodes from an openb node CSV (.csv: columns sn,
// cpu_milli, memory_mib, gpu, model, read by internal/trace) or a node
// YAML file (.yaml, .yml; see ParseNodes). Errors name the file and the
// line or field.
func ReadNodesFile(path string) ([]Node, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		specs, err := trace.ReadNodesFile(path)
		if err != nil {
			return nil, err
		}
		out := make([]Node, len(specs))
		for i, s := range specs {
			if errs := validation.IsDNS1123Subdomain(s.Name); len(errs) > 0 {
				return nil, fmt.Errorf("%s:%d: column sn: %q is not a valid node name: %s", path, s.Line, s.Name, errs[0])
			}
			out[i] = Node{Name: s.Name, CPUMilli: s.CPUMilli, MemoryMiB: s.MemoryMiB, GPUs: s.GPUs, Model: s.Model}
		}
		return out, nil
	case ".yaml", ".yml":
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return ParseNodes(path, data)
	}
	return nil, fmt.Errorf("%s: unknown node file type (want .csv, an openb node list, or .yaml)", path)
}

// ParseNodes parses a cluster YAML file, the node format gpuplane
// simulate and quota read too (trace.ReadCluster, docs/simulate.md):
//
//	nodeGroups:
//	- name: v100          # node names v100-0, v100-1, ...
//	  count: 2
//	  model: V100M32      # internal/gpu catalog name (another name with gpus, cpu and memoryGiB)
//	  gpus: 8             # GPUs, cpu (cores) and memoryGiB default to the model's typical server
//	  cpu: 96
//	  memoryGiB: 768
//	  labels: {topology.kubernetes.io/rack: r1}
//
// The nodes of a group are named <name>-<i>, i zero-padded so that the
// names sort in file order. file names the input in errors.
func ParseNodes(file string, data []byte) ([]Node, error) {
	groups, err := trace.ReadCluster(file, bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []Node
	seen := map[string]string{}
	for i, g := range groups {
		field := fmt.Sprintf("%s:%d: nodeGroups[%d]", file, g.Line, i)
		if err := checkLabels(g.Labels); err != nil {
			return nil, fmt.Errorf("%s.labels: %v", field, err)
		}
		width := len(strconv.Itoa(g.Count - 1))
		for j := 0; j < g.Count; j++ {
			name := fmt.Sprintf("%s-%0*d", g.Name, width, j)
			if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
				return nil, fmt.Errorf("%s.name: %q is not a valid node name: %s", field, name, errs[0])
			}
			if prev, dup := seen[name]; dup {
				return nil, fmt.Errorf("%s.name: node %q is also made by %s", field, name, prev)
			}
			seen[name] = fmt.Sprintf("nodeGroups[%d]", i)
			out = append(out, Node{Name: name, CPUMilli: g.CPUMilli, MemoryMiB: g.MemoryMiB, GPUs: g.GPUs, Model: g.Model, Labels: g.Labels})
		}
	}
	return out, nil
}

func checkLabels(l map[string]string) error {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("key %q: %s", k, errs[0])
		}
		if errs := validation.IsValidLabelValue(l[k]); len(errs) > 0 {
			return fmt.Errorf("%s: value %q: %s", k, l[k], errs[0])
		}
	}
	return nil
}

// OrderNames prefixes every name with its zero-padded position ("07-name"
// of 12 nodes) so that the lexicographic order of the names, which
// kube-scheduler's and the simulator's tie-breaks see, is the given order.
func OrderNames(nodes []Node) {
	width := len(strconv.Itoa(len(nodes) - 1))
	for i := range nodes {
		nodes[i].Name = fmt.Sprintf("%0*d-%s", width, i, nodes[i].Name)
	}
}

// NodeObject is the Node kwok manages for n: capacity and allocatable
// cpu, memory, pods (PodsPerNode) and, with GPUs, nvidia.com/gpu and
// gpuplane.io/gpu-milli (1000 per GPU); the kubelet's well-known labels; and the GPU labels
// the node agent writes (internal/node/labels): nvidia.com/gpu.present,
// gpu.count, gpu.product (the model name, as openb's gpu_spec names it),
// gpu.memory (MiB, when internal/gpu's catalog knows the model) and
// gpuplane.io/gpu.model (for catalog models); with Accelerator, that
// resource instead of NVIDIA's resources and labels.
func NodeObject(n Node) *corev1.Node {
	l := map[string]string{
		corev1.LabelHostname:   n.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(n.CPUMilli, resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(n.MemoryMiB<<20, resource.BinarySI),
		corev1.ResourcePods:   *resource.NewQuantity(PodsPerNode, resource.DecimalSI),
	}
	if n.GPUs > 0 && n.Accelerator != "" {
		res[corev1.ResourceName(n.Accelerator)] = *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI)
	}
	if n.GPUs > 0 && n.Accelerator == "" {
		l[gpuresource.LabelGPUPresent] = "true"
		l[gpuresource.LabelGPUCount] = strconv.Itoa(n.GPUs)
		l[gpuresource.LabelGPUProduct] = labels.Value(n.Model)
		if m, ok := gpu.Default().Get(n.Model); ok {
			l[gpuresource.LabelGPUModel] = labels.Value(m.Name)
			if m.MemoryMiB > 0 {
				l[gpuresource.LabelGPUMemory] = strconv.FormatInt(m.MemoryMiB, 10)
			}
		}
		res[gpuresource.GPU] = *resource.NewQuantity(int64(n.GPUs), resource.DecimalSI)
		res[gpuresource.GPUMilli] = *resource.NewQuantity(gpuresource.MilliPerGPU*int64(n.GPUs), resource.DecimalSI)
	}
	for k, v := range n.Labels {
		l[k] = v
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        n.Name,
			Labels:      l,
			Annotations: map[string]string{KwokAnnotation: "fake"},
		},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res.DeepCopy()},
	}
}

// CreateNodes creates the nodes (16 at a time) and waits until kwok has
// made every one Ready with no taints.
func (c *Cluster) CreateNodes(ctx context.Context, nodes []Node) error {
	work := make(chan Node)
	errc := make(chan error, len(nodes))
	var wg sync.WaitGroup
	for range min(16, len(nodes)) {
		wg.Go(func() {
			for n := range work {
				_, err := c.Client.CoreV1().Nodes().Create(ctx, NodeObject(n), metav1.CreateOptions{})
				if err != nil {
					errc <- fmt.Errorf("create node %s: %w", n.Name, err)
				}
			}
		})
	}
	for _, n := range nodes {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return c.WaitNodesReady(ctx, names)
}

// WaitNodesReady waits until every named node exists, is Ready and has
// no taints; it returns early when ctx ends or a control-plane process
// exits.
func (c *Cluster) WaitNodesReady(ctx context.Context, names []string) error {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	return c.waitUntil(ctx, fmt.Sprintf("%d nodes Ready without taints", len(names)), func(ctx context.Context) error {
		list, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		ready := 0
		var notReady string
		for i := range list.Items {
			n := &list.Items[i]
			if !want[n.Name] {
				continue
			}
			if nodeReady(n) && len(n.Spec.Taints) == 0 {
				ready++
			} else if notReady == "" {
				notReady = fmt.Sprintf("node %s: Ready %v, taints %v", n.Name, nodeReady(n), n.Spec.Taints)
			}
		}
		if ready < len(want) {
			return fmt.Errorf("%d of %d ready; %s", ready, len(want), notReady)
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
