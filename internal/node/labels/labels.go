// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package labels computes GPU feature labels under NVIDIA's
// gpu-feature-discovery names, plus gpuplane's topology labels, and writes
// them to a node-feature-discovery features file or onto the Node object.
package labels

import (
	"fmt"
	"math/bits"
	"regexp"
	"sort"
	"strconv"
	"strings"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Options are the device-plugin settings that labels report.
type Options struct {
	// MIGStrategy is configv1.MIGStrategyNone, Single or Mixed.
	MIGStrategy string
	// Replicas is the replica count of nvidia.com/gpu, time-slicing or MPS
	// (1 when not shared).
	Replicas int
	// Strategy is the sharing strategy of the replicas
	// (configv1.SharingTimeSlicing, SharingMPS); empty: time-slicing.
	Strategy string
	// Renamed reports that the shared resource is renamed
	// (nvidia.com/gpu.shared), in which case the product is not suffixed.
	Renamed bool
}

// OptionsFrom returns the settings of a node agent configuration.
func OptionsFrom(c *configv1.Config) Options {
	return Options{
		MIGStrategy: c.Flags.MIGStrategy,
		Replicas:    c.Replicas(resource.GPU),
		Strategy:    c.SharingStrategy(),
		Renamed:     c.RenameByDefault(),
	}
}

// Prefixes are the label prefixes this package owns: on the Node object,
// labels under them that it no longer computes are removed, except those
// under Foreign.
var Prefixes = []string{"nvidia.com/gpu.", "nvidia.com/mig", "nvidia.com/cuda.", resource.GPUPlanePrefix}

// labelSharingStrategy is gpu-feature-discovery's sharing strategy label:
// none, time-slicing or mps ("" when the single MIG strategy does not fit).
const labelSharingStrategy = "nvidia.com/gpu.sharing-strategy"

// Foreign are the label prefixes under Prefixes that others own and the
// node agent never writes or removes: the NVIDIA GPU operator's component
// switches (nvidia.com/gpu.deploy.<component>, e.g. gpu.deploy.device-plugin
// =false) and workload type (nvidia.com/gpu.workload.config), set by
// administrators and the operator, and the MIG manager's desired and
// reported layout (nvidia.com/mig.config, nvidia.com/mig.config.state),
// and the kubelet API an administrator picks for a node under the chart's
// nodeAgent.perNode (gpuplane.io/kubelet-api).
// Source: the GPU operator's documentation (gpu.workload.config is
// container, vm-passthrough or vm-vgpu; gpu.deploy.<operand>=false turns an
// operand off on a node) and its MIG manager (mig.config is the layout
// wanted, mig.config.state reports pending, success or failed).
var Foreign = []string{"nvidia.com/gpu.deploy.", "nvidia.com/gpu.workload.config", resource.LabelMIGConfig, resource.LabelKubeletAPI}

// Owned reports whether the node agent owns the label key: under one of
// Prefixes and under none of Foreign.
func Owned(key string) bool {
	for _, p := range Foreign {
		if strings.HasPrefix(key, p) {
			return false
		}
	}
	for _, p := range Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// Compute returns the labels of node n. A node with no GPUs gets
// gpu.count 0 and nothing GPU-specific. For a node of mixed models, the
// per-GPU labels describe GPU 0, as gpu-feature-discovery does.
//
// Labels (values in MiB for memory):
//
//	nvidia.com/gpu.present                  "true" (the GPU operator's common GPU label,
//	                                        which the chart's default affinity selects)
//	nvidia.com/gpu.product                  product name, "-MIG-<profile>" under the single
//	                                        strategy, "-SHARED" when time-sliced (Product);
//	                                        "-MIG-INVALID" (count, memory, replicas 0) when
//	                                        single does not fit the node (device.CheckSingleMIG)
//	nvidia.com/gpu.count, gpu.memory        GPUs (or MIG devices under single) and MiB each
//	nvidia.com/gpu.family                   e.g. ampere
//	nvidia.com/gpu.compute.major/.minor     CUDA compute capability
//	nvidia.com/cuda.driver-version.{major,minor,revision,full}
//	nvidia.com/cuda.runtime-version.{major,minor,full}
//	nvidia.com/mig.capable, mig.strategy
//	nvidia.com/gpu.sharing-strategy         none, time-slicing or mps
//	nvidia.com/gpu.replicas
//	nvidia.com/mig-<profile>.{count,memory,multiprocessors}  per MIG profile present
//	gpuplane.io/gpu.model                   internal/gpu catalog name
//	gpuplane.io/gpu.nvlink-clique-size      most GPUs with NVLink between every pair
//	gpuplane.io/gpu.numa-nodes              NUMA nodes with GPUs
func Compute(n device.Node, o Options) map[string]string {
	l := map[string]string{resource.LabelGPUCount: "0"}
	if len(n.GPUs) == 0 {
		return l
	}
	// NVIDIA's GPU operator puts nvidia.com/gpu.present=true on every GPU
	// node (gpu-operator controllers/state_manager.go, commonGPULabelKey);
	// the chart selects it, and a hand-set one must not be removed as a
	// stale label under nvidia.com/gpu. (Prefixes).
	l[resource.LabelGPUPresent] = "true"
	if o.Replicas < 1 {
		o.Replicas = 1
	}
	if o.MIGStrategy == "" {
		o.MIGStrategy = configv1.MIGStrategyNone
	}
	g := answering(n)
	invalid := o.MIGStrategy == configv1.MIGStrategySingle && device.CheckSingleMIG(n) != nil
	productLabels(l, n, g, o, invalid)
	l["nvidia.com/gpu.compute.major"] = strconv.Itoa(g.ComputeMajor)
	l["nvidia.com/gpu.compute.minor"] = strconv.Itoa(g.ComputeMinor)
	model, known := gpu.Default().Get(g.Model)
	if known && model.Family != "" {
		l["nvidia.com/gpu.family"] = model.Family
	}
	if g.Model != "" {
		l[resource.LabelGPUModel] = Value(g.Model)
	}
	cudaLabels(l, n)
	l["nvidia.com/mig.capable"] = strconv.FormatBool(known && model.MIGCapable || g.MIGEnabled)
	l["nvidia.com/mig.strategy"] = o.MIGStrategy
	l[labelSharingStrategy] = "none"
	if o.Replicas > 1 {
		l[labelSharingStrategy] = configv1.SharingTimeSlicing
		if o.Strategy == configv1.SharingMPS {
			l[labelSharingStrategy] = configv1.SharingMPS
		}
	}
	l[resource.LabelGPUReplicas] = strconv.Itoa(o.Replicas)
	if invalid {
		l[labelSharingStrategy] = ""
		l[resource.LabelGPUReplicas] = "0"
	}
	if o.MIGStrategy == configv1.MIGStrategyMixed {
		mixedMIGLabels(l, n)
	}
	l["gpuplane.io/gpu.nvlink-clique-size"] = strconv.Itoa(NVLinkClique(n))
	l["gpuplane.io/gpu.numa-nodes"] = strconv.Itoa(numaNodes(n))
	return l
}

// answering returns the first GPU that answers for itself: a GPU lost at
// discovery is listed without product name, memory or compute capability.
func answering(n device.Node) device.GPU {
	for _, x := range n.GPUs {
		if x.ProductName != "" {
			return x
		}
	}
	return n.GPUs[0]
}

// productLabels sets gpu.product, gpu.count and gpu.memory: of the GPUs,
// or of the MIG devices under the single strategy (invalid: single does not
// fit the node).
func productLabels(l map[string]string, n device.Node, g device.GPU, o Options, invalid bool) {
	var suffixes []string
	count, mem := len(n.GPUs), g.MemoryMiB
	switch {
	case invalid:
		// gpu-feature-discovery's newInvalidMigStrategyLabeler
		// (k8s-device-plugin internal/lm/mig-strategy.go).
		suffixes, count, mem = []string{"MIG", "INVALID"}, 0, 0
	case o.MIGStrategy == configv1.MIGStrategySingle && len(g.MIG) > 0:
		p, _ := device.MIGResourceProfile(g.MIG[0].Profile)
		suffixes = []string{"MIG", p}
		count, mem = 0, g.MIG[0].MemoryMiB
		for _, x := range n.GPUs {
			count += len(x.MIG)
		}
	}
	if o.Replicas > 1 && !o.Renamed && !invalid {
		suffixes = append(suffixes, "SHARED")
	}
	l[resource.LabelGPUProduct] = Product(g.ProductName, suffixes...)
	l[resource.LabelGPUCount] = strconv.Itoa(count)
	l[resource.LabelGPUMemory] = strconv.FormatInt(mem, 10)
}

// cudaLabels sets the driver and CUDA runtime versions.
func cudaLabels(l map[string]string, n device.Node) {
	if v := strings.Split(n.DriverVersion, "."); n.DriverVersion != "" {
		names := []string{"major", "minor", "revision"}
		for i := 0; i < len(v) && i < 3; i++ {
			l["nvidia.com/cuda.driver-version."+names[i]] = Value(v[i])
		}
		l["nvidia.com/cuda.driver-version.full"] = Value(n.DriverVersion)
	}
	if n.CUDADriverMajor > 0 {
		l["nvidia.com/cuda.runtime-version.major"] = strconv.Itoa(n.CUDADriverMajor)
		l["nvidia.com/cuda.runtime-version.minor"] = strconv.Itoa(n.CUDADriverMinor)
		l["nvidia.com/cuda.runtime-version.full"] = fmt.Sprintf("%d.%d", n.CUDADriverMajor, n.CUDADriverMinor)
	}
}

// mixedMIGLabels sets, under the mixed strategy, the count, memory and
// multiprocessors of each advertised MIG profile present.
func mixedMIGLabels(l map[string]string, n device.Node) {
	type agg struct {
		count int
		m     device.MIGDevice
	}
	profiles := map[string]*agg{}
	for _, x := range n.GPUs {
		for _, m := range x.MIG {
			p, err := device.MIGResourceProfile(m.Profile)
			if err != nil {
				continue // not advertised (deviceplugin.Excluded)
			}
			if profiles[p] == nil {
				profiles[p] = &agg{m: m}
			}
			profiles[p].count++
		}
	}
	for p, a := range profiles {
		k := resource.MIGResource(p)
		l[k+".count"] = strconv.Itoa(a.count)
		l[k+".memory"] = strconv.FormatInt(a.m.MemoryMiB, 10)
		l[k+".multiprocessors"] = strconv.Itoa(a.m.Multiprocessors)
	}
}

// numaNodes returns how many NUMA nodes have GPUs.
func numaNodes(n device.Node) int {
	numa := map[int]bool{}
	for _, x := range n.GPUs {
		if x.NUMANode >= 0 {
			numa[x.NUMANode] = true
		}
	}
	return len(numa)
}

// NVLinkClique returns the size of the largest set of GPUs with an NVLink
// between every pair: 1 when no pair has NVLink, 0 without GPUs. Exact for
// up to 20 GPUs; beyond, a greedy lower bound.
func NVLinkClique(n device.Node) int {
	k := len(n.GPUs)
	if k == 0 {
		return 0
	}
	nv := func(i, j int) bool {
		return i < len(n.Links) && j < len(n.Links[i]) && n.Links[i][j].Type == device.LinkNVLink
	}
	if k > 20 {
		best := 1
		for s := 0; s < k; s++ {
			set := []int{s}
			for j := 0; j < k; j++ {
				ok := j != s
				for _, i := range set {
					ok = ok && nv(i, j)
				}
				if ok {
					set = append(set, j)
				}
			}
			best = max(best, len(set))
		}
		return best
	}
	adj := make([]uint32, k)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			if i != j && nv(i, j) {
				adj[i] |= 1 << j
			}
		}
	}
	best := 1
	for set := uint32(1); set < 1<<k; set++ {
		size := bits.OnesCount32(set)
		if size <= best {
			continue
		}
		ok := true
		for s := set; s != 0 && ok; s &= s - 1 {
			i := bits.TrailingZeros32(s)
			ok = set&^(1<<i)&^adj[i] == 0
		}
		if ok {
			best = size
		}
	}
	return best
}

var invalidChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Value makes s a valid label value: spaces and other characters outside
// [A-Za-z0-9._-] become "-", at most 63 characters, starting and ending
// with an alphanumeric character.
func Value(s string) string {
	s = invalidChars.ReplaceAllString(s, "-")
	if len(s) > maxValue {
		s = s[:maxValue]
	}
	return strings.Trim(s, "-_.")
}

// maxValue is the most characters of a label value (Kubernetes).
const maxValue = kubename.MaxLabelValue

var unsafe = regexp.MustCompile(`[^A-Za-z0-9-_. ]`)

// sanitise is gpu-feature-discovery's: characters outside
// [A-Za-z0-9-_. ] dropped, runs of spaces made one "-" (k8s-device-plugin
// internal/lm/resource.go sanitise).
func sanitise(s string) string {
	return strings.Join(strings.Fields(unsafe.ReplaceAllString(s, "")), "-")
}

// Product returns the nvidia.com/gpu.product value of a GPU model with
// suffixes (e.g. "MIG", "1g.24gb", "SHARED"): each part sanitised and the
// non-empty parts joined by "-", as gpu-feature-discovery's
// getProductName does (k8s-device-plugin internal/lm/resource.go). Beyond
// the 63 characters of a label value, which NVIDIA's code does not check
// (the API server then refuses the label), the model is cut and the
// suffixes kept whole, so the value still tells the MIG profile and the
// sharing: "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition" with
// MIG, 1g.24gb and SHARED gives
// "NVIDIA-RTX-PRO-6000-Blackwell-Max-Q-Workstat-MIG-1g.24gb-SHARED".
func Product(model string, suffixes ...string) string {
	tail := ""
	for _, s := range suffixes {
		if s = sanitise(s); s != "" {
			tail += "-" + s
		}
	}
	m := strings.Trim(sanitise(model), "-_.")
	if len(m)+len(tail) > maxValue {
		m = strings.TrimRight(m[:max(0, maxValue-len(tail))], "-_.")
	}
	if m == "" {
		tail = strings.TrimLeft(tail, "-")
		if len(tail) > maxValue {
			tail = tail[:maxValue]
		}
		return strings.Trim(tail, "-_.")
	}
	return m + tail
}

// Annotations returns the Node annotations of node n:
// resource.AnnotationNodeGPUUUIDs, its GPUs' UUIDs in index order,
// comma-separated, which gpuplane-scheduler copies onto the pods it places
// (resource.AnnotationGPUUUIDs). A node with no GPUs gets none.
func Annotations(n device.Node) map[string]string {
	if len(n.GPUs) == 0 {
		return nil
	}
	uuids := make([]string, len(n.GPUs))
	for i, g := range n.GPUs {
		uuids[i] = g.UUID
	}
	return map[string]string{resource.AnnotationNodeGPUUUIDs: strings.Join(uuids, ",")}
}

// Sorted returns the labels as sorted "key=value" lines.
func Sorted(l map[string]string) []string {
	out := make([]string, 0, len(l))
	for k, v := range l {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
