// Package cluster holds node and GPU allocation state: CPU (millicores),
// memory (MiB) and, per GPU, the free share in milli-GPU (1000 = one whole
// GPU). It is the state that internal/placement decides on and that the
// simulator and the scheduler plugins mutate; it refuses any allocation that
// would over-commit a node.
package cluster

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
)

// MilliGPU is one whole GPU in milli-GPU.
const MilliGPU = 1000

// MaxGPUsPerNode is the largest GPU count a node may have (GPUSet is a
// 64-bit mask).
const MaxGPUsPerNode = 64

// ModelSet is a set of GPU models as a bit mask over a Cluster's model IDs.
// The zero set means "any model".
type ModelSet uint64

// GPUSet is a set of GPU indices on one node, as a bit mask.
type GPUSet uint64

// Count returns the number of GPUs in the set.
func (s GPUSet) Count() int { return bits.OnesCount64(uint64(s)) }

// Has reports whether GPU i is in the set.
func (s GPUSet) Has(i int) bool { return s&(1<<uint(i)) != 0 }

// Indices returns the GPU indices in ascending order.
func (s GPUSet) Indices() []int {
	out := make([]int, 0, s.Count())
	for m := uint64(s); m != 0; m &= m - 1 {
		out = append(out, bits.TrailingZeros64(m))
	}
	return out
}

// Node is one node's capacity and free resources.
type Node struct {
	Name string
	// Model is the GPU model name ("" for a CPU-only node); ModelID its
	// index in the cluster's model table.
	Model   string
	ModelID int
	// CPUMilli and MemoryMiB are the allocatable capacity.
	CPUMilli, MemoryMiB int64
	// CPUFree and MemoryFree are what is not yet allocated.
	CPUFree, MemoryFree int64
	// GPUFree is the free milli-GPU of each GPU, indexed by GPU.
	GPUFree []int64
	// Pods is the number of pods bound to the node.
	Pods int
	// Affinity counts bound GPU pods by kind, for GPU Clustering:
	// Affinity[0] counts GPU-sharing pods, Affinity[k] pods of k whole GPUs.
	Affinity [MaxGPUsPerNode + 1]int32
	// AffinityKinds is the number of non-zero entries in Affinity.
	AffinityKinds int
	// Version increases on every change of the node's free resources.
	Version uint64
}

// GPUs returns the node's GPU count.
func (n *Node) GPUs() int { return len(n.GPUFree) }

// GPUFreeTotal returns the node's free milli-GPU summed over its GPUs.
func (n *Node) GPUFreeTotal() int64 {
	var t int64
	for _, f := range n.GPUFree {
		t += f
	}
	return t
}

// FullyFreeGPUs returns the number of GPUs with nothing allocated.
func (n *Node) FullyFreeGPUs() int {
	c := 0
	for _, f := range n.GPUFree {
		if f == MilliGPU {
			c++
		}
	}
	return c
}

// Pod is a pod's resource request.
type Pod struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// NumGPU is the number of GPUs (0 to 64); GPUMilli the share of each in
	// milli-GPU, below 1000 only when NumGPU is 1 (a shared GPU).
	NumGPU   int
	GPUMilli int64
	// Models restricts the GPU models the pod may use; 0 means any.
	Models ModelSet
}

// TotalGPUMilli returns the pod's whole GPU request in milli-GPU.
func (p *Pod) TotalGPUMilli() int64 { return int64(p.NumGPU) * p.GPUMilli }

// IsGPUShare reports whether the pod asks for a share of one GPU.
func (p *Pod) IsGPUShare() bool { return p.NumGPU == 1 && p.GPUMilli < MilliGPU }

// Validate checks a pod's request on its own (not against any node).
func (p *Pod) Validate() error {
	switch {
	case p.CPUMilli < 0:
		return fmt.Errorf("negative cpu_milli %d", p.CPUMilli)
	case p.MemoryMiB < 0:
		return fmt.Errorf("negative memory_mib %d", p.MemoryMiB)
	case p.NumGPU < 0 || p.NumGPU > MaxGPUsPerNode:
		return fmt.Errorf("num_gpu %d out of range 0..%d", p.NumGPU, MaxGPUsPerNode)
	case p.NumGPU == 0 && p.GPUMilli != 0:
		return fmt.Errorf("gpu_milli %d with num_gpu 0", p.GPUMilli)
	case p.NumGPU > 0 && (p.GPUMilli <= 0 || p.GPUMilli > MilliGPU):
		return fmt.Errorf("gpu_milli %d out of range 1..1000", p.GPUMilli)
	case p.NumGPU > 1 && p.GPUMilli != MilliGPU:
		return fmt.Errorf("gpu_milli %d below 1000 with num_gpu %d: only one GPU can be shared", p.GPUMilli, p.NumGPU)
	}
	return nil
}

// Cluster is a set of nodes and the GPU model table their ModelIDs index.
type Cluster struct {
	Nodes  []Node
	models []string
	ids    map[string]int
}

// New returns an empty cluster.
func New() *Cluster { return &Cluster{ids: map[string]int{}} }

// ModelID returns the ID of a GPU model name, adding it to the table if new.
// At most 64 models are supported; more is an error.
func (c *Cluster) ModelID(name string) (int, error) {
	if id, ok := c.ids[name]; ok {
		return id, nil
	}
	if len(c.models) == 64 {
		return 0, errors.New("more than 64 GPU models")
	}
	c.ids[name] = len(c.models)
	c.models = append(c.models, name)
	return len(c.models) - 1, nil
}

// Models returns a ModelSet for a gpu_spec string: model names joined by
// '|'; empty means any model.
func (c *Cluster) Models(spec string) (ModelSet, error) {
	var s ModelSet
	for _, m := range strings.Split(spec, "|") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		id, err := c.ModelID(m)
		if err != nil {
			return 0, err
		}
		s |= 1 << uint(id)
	}
	return s, nil
}

// AddNode adds a node with the given capacity and GPUs of one model, all
// free. It returns the node's index.
func (c *Cluster) AddNode(name string, cpuMilli, memoryMiB int64, gpus int, model string) (int, error) {
	if cpuMilli < 0 || memoryMiB < 0 {
		return 0, fmt.Errorf("node %s: negative capacity", name)
	}
	if gpus < 0 || gpus > MaxGPUsPerNode {
		return 0, fmt.Errorf("node %s: gpu count %d out of range 0..%d", name, gpus, MaxGPUsPerNode)
	}
	id := -1
	if gpus > 0 {
		if model == "" {
			return 0, fmt.Errorf("node %s: %d GPUs without a model", name, gpus)
		}
		var err error
		if id, err = c.ModelID(model); err != nil {
			return 0, err
		}
	}
	n := Node{Name: name, Model: model, ModelID: id, CPUMilli: cpuMilli, MemoryMiB: memoryMiB,
		CPUFree: cpuMilli, MemoryFree: memoryMiB, GPUFree: make([]int64, gpus)}
	for i := range n.GPUFree {
		n.GPUFree[i] = MilliGPU
	}
	c.Nodes = append(c.Nodes, n)
	return len(c.Nodes) - 1, nil
}

// TotalGPUMilli returns the cluster's GPU capacity in milli-GPU.
func (c *Cluster) TotalGPUMilli() int64 {
	var t int64
	for i := range c.Nodes {
		t += int64(len(c.Nodes[i].GPUFree)) * MilliGPU
	}
	return t
}

// FreeGPUMilli returns the cluster's unallocated GPU capacity in milli-GPU.
func (c *Cluster) FreeGPUMilli() int64 {
	var t int64
	for i := range c.Nodes {
		t += c.Nodes[i].GPUFreeTotal()
	}
	return t
}

// ModelAllowed reports whether a pod may use the node's GPU model. A pod
// that asks for no GPU may use any node; a GPU pod never fits a CPU-only
// node.
func ModelAllowed(n *Node, p *Pod) bool {
	if p.Models == 0 {
		return true
	}
	if n.ModelID < 0 {
		return false
	}
	return p.Models&(1<<uint(n.ModelID)) != 0
}

// Fits reports whether the pod fits the node's free resources: CPU, memory,
// GPU model and enough GPUs with at least GPUMilli free each.
func Fits(n *Node, p *Pod) bool {
	if p.CPUMilli > n.CPUFree || p.MemoryMiB > n.MemoryFree {
		return false
	}
	if p.NumGPU == 0 {
		return true
	}
	if p.NumGPU > len(n.GPUFree) || !ModelAllowed(n, p) {
		return false
	}
	k := 0
	for _, f := range n.GPUFree {
		if f >= p.GPUMilli {
			k++
			if k == p.NumGPU {
				return true
			}
		}
	}
	return false
}

// Allocate binds the pod to node i on the given GPUs. It returns an error,
// and changes nothing, if that would over-commit CPU, memory or any GPU, or
// if gpus does not hold exactly NumGPU GPUs of the node.
func (c *Cluster) Allocate(i int, p *Pod, gpus GPUSet) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("node index %d out of range", i)
	}
	n := &c.Nodes[i]
	if err := p.Validate(); err != nil {
		return fmt.Errorf("pod %s: %w", p.Name, err)
	}
	if p.CPUMilli > n.CPUFree || p.MemoryMiB > n.MemoryFree {
		return fmt.Errorf("pod %s does not fit node %s: cpu %d/%d millicores, memory %d/%d MiB free",
			p.Name, n.Name, p.CPUMilli, n.CPUFree, p.MemoryMiB, n.MemoryFree)
	}
	if gpus.Count() != p.NumGPU || (len(n.GPUFree) < 64 && uint64(gpus)>>uint(len(n.GPUFree)) != 0) {
		return fmt.Errorf("pod %s wants %d GPUs, got set %b on node %s with %d GPUs", p.Name, p.NumGPU, uint64(gpus), n.Name, len(n.GPUFree))
	}
	if p.NumGPU > 0 && !ModelAllowed(n, p) {
		return fmt.Errorf("pod %s may not use GPU model %q of node %s", p.Name, n.Model, n.Name)
	}
	for _, g := range gpus.Indices() {
		if n.GPUFree[g] < p.GPUMilli {
			return fmt.Errorf("pod %s wants %d milli-GPU on GPU %d of node %s, %d free", p.Name, p.GPUMilli, g, n.Name, n.GPUFree[g])
		}
	}
	for _, g := range gpus.Indices() {
		n.GPUFree[g] -= p.GPUMilli
	}
	n.CPUFree -= p.CPUMilli
	n.MemoryFree -= p.MemoryMiB
	n.Pods++
	n.addAffinity(p, 1)
	n.Version++
	return nil
}

// Release returns a pod's resources to node i; gpus must be the set it was
// allocated. It returns an error, and changes nothing, if that would free
// more than the node's capacity.
func (c *Cluster) Release(i int, p *Pod, gpus GPUSet) error {
	if i < 0 || i >= len(c.Nodes) {
		return fmt.Errorf("node index %d out of range", i)
	}
	n := &c.Nodes[i]
	if n.CPUFree+p.CPUMilli > n.CPUMilli || n.MemoryFree+p.MemoryMiB > n.MemoryMiB || n.Pods == 0 {
		return fmt.Errorf("release of pod %s would exceed node %s capacity", p.Name, n.Name)
	}
	if gpus.Count() != p.NumGPU || (len(n.GPUFree) < 64 && uint64(gpus)>>uint(len(n.GPUFree)) != 0) {
		return fmt.Errorf("release of pod %s: GPU set %b does not match %d GPUs", p.Name, uint64(gpus), p.NumGPU)
	}
	for _, g := range gpus.Indices() {
		if n.GPUFree[g]+p.GPUMilli > MilliGPU {
			return fmt.Errorf("release of pod %s would free GPU %d of node %s beyond 1000 milli-GPU", p.Name, g, n.Name)
		}
	}
	for _, g := range gpus.Indices() {
		n.GPUFree[g] += p.GPUMilli
	}
	n.CPUFree += p.CPUMilli
	n.MemoryFree += p.MemoryMiB
	n.Pods--
	n.addAffinity(p, -1)
	n.Version++
	return nil
}

func (n *Node) addAffinity(p *Pod, d int32) {
	if p.NumGPU == 0 {
		return
	}
	k := p.NumGPU
	if p.IsGPUShare() {
		k = 0
	}
	before := n.Affinity[k]
	n.Affinity[k] += d
	switch {
	case before == 0 && n.Affinity[k] != 0:
		n.AffinityKinds++
	case before != 0 && n.Affinity[k] == 0:
		n.AffinityKinds--
	}
}

// AffinityKey returns the GPU Clustering kind of a GPU pod (0 for a shared
// GPU, k for k whole GPUs) and false for a pod without GPUs.
func AffinityKey(p *Pod) (int, bool) {
	if p.NumGPU == 0 {
		return 0, false
	}
	if p.IsGPUShare() {
		return 0, true
	}
	return p.NumGPU, true
}
