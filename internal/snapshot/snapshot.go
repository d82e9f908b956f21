// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package snapshot reads a live Kubernetes cluster as `kubectl get
// nodes,pods,resourceslices,resourceclaims,resourceclaimtemplates,deviceclasses
// -A -o json` (or -o yaml) writes it: each Node as a trace.NodeSpec with the
// GPUs NVIDIA's device plugin or DRA driver serves on it, each Pod as a
// trace.PodSpec with what it asks and, when bound, where it runs. It links
// no k8s.io package (cmd/gpuplane stays small): plain encoding/json into
// minimal structs. Errors name the file, the line and the field; what the
// simulator does not model is a warning, never a silent success.
package snapshot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Snapshot is a Kubernetes cluster as `kubectl get nodes,pods -A -o json`
// lists it: a v1 List of Nodes and Pods, read with encoding/json into
// minimal structs (cmd/gpuplane links no k8s.io package).
type Snapshot struct {
	Nodes []Node
	Pods  []Pod
	// Warnings are what the reader read past: unmodelled constraints.
	Warnings []string
}

// Node is one Node.
type Node struct {
	// NodeSpec holds the node's allocatable CPU (millicores, rounded down),
	// memory (MiB, rounded down), GPUs and GPU model (the catalog model of
	// its nvidia.com/gpu.product label, gpu.ModelOfProduct). Line is the
	// line of the file its item starts on.
	trace.NodeSpec
	// Product is the nvidia.com/gpu.product label.
	Product string
	// MIG counts the allocatable MIG devices by resource name
	// (nvidia.com/mig-1g.10gb); MIGConfig is the nvidia.com/mig.config
	// label. The node's MIG-enabled GPUs are its nvidia.com/gpu.count
	// label less the whole GPUs it advertises (nvidia.com/gpu). When they
	// are MIG-enabled alike (each profile's count a multiple of their
	// count, a layout the model takes: gpu.PlaceMIG), trace.NodeSpec.MIG is that
	// layout per GPU and trace.NodeSpec.MIGGPUs their count (0 when all GPUs),
	// which gpuplane simulate --sharing mig simulates on the node's first
	// GPUs; otherwise, and in the other modes, they are simulated as whole
	// GPUs.
	MIG       map[string]int64
	MIGConfig string
	// Replicas is the nvidia.com/gpu.replicas label (time-slicing), 1
	// without it; GPUs is the allocatable nvidia.com/gpu divided by it, or
	// nvidia.com/gpu.shared (renameByDefault; trace.NodeSpec.Shared). Under
	// NVIDIA's single MIG strategy (a product "<product>-MIG-<profile>")
	// the nvidia.com/gpu devices are instances: GPUs is their count over
	// the instances of the profile one GPU holds (gpu.MIGFullCount), MIG
	// counts them under nvidia.com/mig-<profile>.
	Replicas int
	// Unschedulable is spec.unschedulable (a cordoned node).
	Unschedulable bool
	// DRA reports that the node's GPUs are those its ResourceSlices of
	// driver gpu.nvidia.com publish (it has no nvidia.com/gpu): the
	// untainted whole GPUs (and the tainted ones a running pod holds),
	// the model of their productName. DynamicMIG: some publish MIG
	// placements with counters (MIG on demand; else trace.NodeSpec.NoDynamicMIG);
	// DRAShares: some are shareable (allowMultipleAllocations).
	// NodeSpec.Serving says whether it serves them by DRA only, and
	// nvidia.com/gpu through a DeviceClass too (KEP-5004), or by both a
	// device plugin and DRA.
	DRA, DynamicMIG, DRAShares bool
	// Plugin is how NVIDIA's device plugin serves the node's GPUs, as its
	// labels say (gpu.ReadDevicePluginSetup). Renamed: it serves its
	// replicas as nvidia.com/gpu.shared (renameByDefault); Shared (in
	// trace.NodeSpec) is set for replicas under either name. SingleMIG is
	// the profile each nvidia.com/gpu device is under the single MIG
	// strategy, "" otherwise. See readSharing and servedRequests.
	Plugin    gpu.DevicePluginSetup
	Renamed   bool
	SingleMIG string
}

// Pod is one Pod.
type Pod struct {
	// trace.PodSpec holds the pod's requests as kube-scheduler computes them
	// (see podRequests), its GPU models (GPUSpec) and its phase; Name is
	// namespace/name and Line the line of the file its item starts on.
	trace.PodSpec
	// NodeName is spec.nodeName, "" for a pod not yet bound.
	NodeName string
	// GPUs are the GPU indices gpuplane-scheduler chose (the gpuplane.io/gpus
	// annotation), or a running DRA pod's allocated GPUs (its claims'
	// status.allocation); nil when absent.
	GPUs []int
	// MIGProfile and MIGStart are a running DRA pod's MIG placement (the
	// device's profile attribute, its start slot; -1 unknown); "" for
	// none.
	MIGProfile string
	MIGStart   int
}

// Pending reports whether the pod waits for a node: phase Pending and no
// nodeName.
func (p *Pod) Pending() bool { return p.Phase == "Pending" && p.NodeName == "" }

// Bound reports whether the pod holds resources on its node: it has a
// nodeName and has not ended (phase other than Succeeded and Failed).
func (p *Pod) Bound() bool {
	return p.NodeName != "" && p.Phase != "Succeeded" && p.Phase != "Failed"
}

// NoModel is the GPU model of a pod whose model constraints exclude each
// other: no node has it.
const NoModel = "no-such-model"

// The JSON of the List, as far as the reader needs it.
type kubeList struct {
	Kind  string            `json:"kind"`
	Items []json.RawMessage `json:"items"`
}

type kubeObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable  bool              `json:"unschedulable"`
		NodeName       string            `json:"nodeName"`
		NodeSelector   map[string]string `json:"nodeSelector"`
		Containers     []kubeContainer   `json:"containers"`
		InitContainers []kubeContainer   `json:"initContainers"`
		Overhead       map[string]string `json:"overhead"`
		ResourceClaims []struct {
			Name                      string `json:"name"`
			ResourceClaimName         string `json:"resourceClaimName"`
			ResourceClaimTemplateName string `json:"resourceClaimTemplateName"`
		} `json:"resourceClaims"`
		Affinity *struct {
			NodeAffinity *struct {
				Required *struct {
					Terms []kubeTerm `json:"nodeSelectorTerms"`
				} `json:"requiredDuringSchedulingIgnoredDuringExecution"`
			} `json:"nodeAffinity"`
			PodAffinity     json.RawMessage `json:"podAffinity"`
			PodAntiAffinity json.RawMessage `json:"podAntiAffinity"`
		} `json:"affinity"`
		Taints                    []kubeTaint       `json:"taints"`
		Tolerations               []kubeToleration  `json:"tolerations"`
		TopologySpreadConstraints []json.RawMessage `json:"topologySpreadConstraints"`
	} `json:"spec"`
	Status struct {
		Phase       string            `json:"phase"`
		Capacity    map[string]string `json:"capacity"`
		Allocatable map[string]string `json:"allocatable"`
		// A pod's claims made from templates, and its extended
		// resources' claim (DRA).
		ResourceClaimStatuses []struct {
			Name              string `json:"name"`
			ResourceClaimName string `json:"resourceClaimName"`
		} `json:"resourceClaimStatuses"`
		ExtendedResourceClaimStatus *struct {
			ResourceClaimName string `json:"resourceClaimName"`
		} `json:"extendedResourceClaimStatus"`
	} `json:"status"`
}

// kubeTerm is one nodeSelectorTerms entry (filter.go).
type kubeTerm struct {
	Expressions []kubeRequirement `json:"matchExpressions"`
	Fields      []kubeRequirement `json:"matchFields"`
}

type kubeContainer struct {
	Name          string  `json:"name"`
	RestartPolicy *string `json:"restartPolicy"`
	Resources     struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
}

// field writes a JSON path step for a map key: .cpu, or ["nvidia.com/gpu"]
// for a key that is not a plain word.
func field(key string) string {
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "[" + strconv.Quote(key) + "]"
		}
	}
	return "." + key
}

// Read reads the JSON of `kubectl get nodes,pods -A -o json`, or
// the YAML of `-o yaml` (a file whose first character is not '{';
// readYAMLList). An error names file and the JSON path of the bad value
// (snap.json: items[3].spec.containers[0].resources.requests.cpu: ...),
// or the line of a JSON syntax error.
func Read(file string, r io.Reader) (*Snapshot, error) {
	list, lines, err := readKubeList(file, r)
	if err != nil {
		return nil, err
	}
	rd := &itemReader{s: &Snapshot{}, base: file, nodeNames: map[string]bool{}, podNames: map[string]bool{},
		dra: &draObjects{claims: map[string]draItem{}, templates: map[string]draItem{}, classes: map[string]draClass{}}}
	for i, raw := range list.Items {
		if err := rd.item(i, lines[i], raw); err != nil {
			return nil, err
		}
	}
	s := rd.s
	if err := s.applyDRA(file, rd.dra, rd.refs); err != nil {
		return nil, err
	}
	s.replicaShares(file)
	s.servedRequests(file)
	for i, p := range s.Pods {
		if p.NodeName != "" && !rd.nodeNames[p.NodeName] && p.Bound() {
			return nil, fmt.Errorf("%s:%d: %s.spec.nodeName: pod %s is bound to node %s, which the List does not hold", file, p.Line, rd.podPaths[i], trace.Quote(p.Name), trace.Quote(p.NodeName))
		}
	}
	return s, nil
}

// readKubeList reads the List, JSON or YAML, and the line of each of its
// items; a file that holds none, or another kind, is an error.
func readKubeList(file string, r io.Reader) (kubeList, []int, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return kubeList{}, nil, fmt.Errorf("%s: %w", file, err)
	}
	// A UTF-8 byte order mark, as some Windows editors write, is no JSON.
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return kubeList{}, nil, fmt.Errorf("%s:1: empty file: want the List of `kubectl get nodes,pods -A -o json`", file)
	}
	var list kubeList
	var lines []int
	if isYAML(data) {
		list, lines, err = readYAMLList(file, data)
	} else {
		list, lines, err = readList(file, data)
	}
	if err != nil {
		return kubeList{}, nil, err
	}
	switch list.Kind {
	case "List", "NodeList", "PodList":
	default:
		return kubeList{}, nil, fmt.Errorf("%s: kind %s: want the List of `kubectl get nodes,pods -A -o json`", file, trace.Quote(list.Kind))
	}
	return list, lines, nil
}

// itemReader reads a List's items into s, and what Read checks once all
// are read: the DRA objects, the pods' claims, the names seen, and the
// path of each pod in the List.
type itemReader struct {
	s         *Snapshot
	base      string // the file
	dra       *draObjects
	refs      []podClaims
	nodeNames map[string]bool
	podNames  map[string]bool
	podPaths  []string
}

// item reads List item i, raw, at line: a node, a pod or a DRA object.
func (rd *itemReader) item(i, line int, raw json.RawMessage) error {
	path := fmt.Sprintf("items[%d]", i)
	file := fmt.Sprintf("%s:%d", rd.base, line) // errors name the item's line
	var o kubeObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return jsonError(file, path, nil, err)
	}
	if o.Metadata.Name == "" || len(o.Metadata.Name) > trace.MaxNameLen || len(o.Metadata.Namespace) > kubename.MaxLabel {
		return fmt.Errorf("%s: %s.metadata.name: empty, or a name or namespace too long", file, path)
	}
	switch o.Kind {
	case "Node":
		n, err := readNode(path, line, &o)
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		n.readNodeFilters(&o)
		if rd.nodeNames[n.Name] {
			return fmt.Errorf("%s: %s.metadata.name: node %s listed twice", file, path, trace.Quote(n.Name))
		}
		rd.nodeNames[n.Name] = true
		if w := n.amdLayoutWarning(); w != "" {
			rd.s.Warnings = append(rd.s.Warnings, file+": "+w)
		}
		rd.s.Nodes = append(rd.s.Nodes, n)
	case "Pod":
		p, warn, err := readPod(path, line, &o)
		var nm notModelled
		if errors.As(err, &nm) {
			rd.s.Warnings = append(rd.s.Warnings, file+": "+nm.what+": left out of the simulation (a running one's devices are simulated as free)")
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		var fw []string
		p.Filter, fw = podFilter(path, &p, &o)
		warn = append(warn, fw...)
		if rd.podNames[p.Name] {
			return fmt.Errorf("%s: %s.metadata: pod %s listed twice", file, path, trace.Quote(p.Name))
		}
		rd.podNames[p.Name] = true
		for _, w := range warn {
			rd.s.Warnings = append(rd.s.Warnings, file+": "+w)
		}
		rd.s.Pods = append(rd.s.Pods, p)
		rd.podPaths = append(rd.podPaths, path)
		rd.refs = append(rd.refs, claimRefs(&o))
	default:
		if !isDRAKind(o.Kind) {
			return fmt.Errorf("%s: %s.kind: %s, want Node, Pod, ResourceSlice, ResourceClaim, ResourceClaimTemplate or DeviceClass", file, path, trace.Quote(o.Kind))
		}
		if err := rd.dra.read(rd.base, path, line, &o, raw); err != nil {
			return err
		}
	}
	return nil
}

// replicaShares gives each pod of one nvidia.com/gpu.shared replica its
// share: 1000 / the replicas of the nodes that serve it (rounded down), as
// simulate's timeslice:N mode models a replica; the largest replica count
// when the nodes differ (with a warning), 1000 when no node serves it.
func (s *Snapshot) replicaShares(file string) {
	counts := map[int]bool{}
	r := 0
	for _, n := range s.Nodes {
		if n.Renamed {
			counts[n.Replicas] = true
			r = max(r, n.Replicas)
		}
	}
	asked := 0
	for i := range s.Pods {
		if p := &s.Pods[i]; p.Resource == cluster.ResourceShared {
			asked++
			if r > 0 {
				p.GPUMilli = int16(max(1, cluster.MilliGPU/r))
			}
		}
	}
	if asked > 0 && len(counts) > 1 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%s: the nodes that serve %s time-slice their GPUs %d ways differently: each of the %d pods asking for a replica is simulated as 1/%d of a GPU, the most replicas", file, sharedGPU, len(counts), asked, r))
	}
}

// readList reads the List's kind and items, and the line each item
// starts on.
func readList(file string, data []byte) (kubeList, []int, error) {
	var list kubeList
	var lines []int
	dec := json.NewDecoder(bytes.NewReader(data))
	line, at := 1, 0
	lineAt := func(off int) int { // the line of the first value byte at or after off
		for off < len(data) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\r' || data[off] == '\n' || data[off] == ',') {
			off++
		}
		line += bytes.Count(data[at:off], []byte("\n"))
		at = off
		return line
	}
	fail := func(err error) (kubeList, []int, error) { return list, nil, jsonError(file, "", data, err) }
	if tok, err := dec.Token(); err != nil {
		return fail(err)
	} else if tok != json.Delim('{') {
		return list, nil, fmt.Errorf("%s:%d: not a JSON object", file, lineAt(0))
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		switch tok {
		case "kind":
			if err := dec.Decode(&list.Kind); err != nil {
				return fail(err)
			}
		case "items":
			if tok, err := dec.Token(); err != nil {
				return fail(err)
			} else if tok != json.Delim('[') {
				return list, nil, fmt.Errorf("%s: items: not a JSON array", file)
			}
			list.Items, lines = nil, nil
			for dec.More() {
				lines = append(lines, lineAt(int(dec.InputOffset())))
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fail(err)
				}
				list.Items = append(list.Items, raw)
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return list, nil, fmt.Errorf("%s:%d: data after the List", file, lineAt(int(dec.InputOffset())))
	}
	return list, lines, nil
}

// jsonError names the file and, for a syntax error, the line; for a type
// error the path of the field.
func jsonError(file, path string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) && data != nil:
		return fmt.Errorf("%s:%d: the JSON ends early (a truncated file?)", file, 1+bytes.Count(data, []byte("\n")))
	case errors.As(err, &se) && data != nil:
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("%s:%d: JSON syntax error: %v", file, line, se)
	case errors.As(err, &te):
		p := te.Field
		if path != "" {
			p = path + "." + p
		}
		return fmt.Errorf("%s: %s: a JSON %s where a %s belongs", file, p, te.Value, te.Type)
	}
	if path != "" {
		return fmt.Errorf("%s: %s: %v", file, path, err)
	}
	return fmt.Errorf("%s: %v", file, err)
}

// quantity reads one quantity of a resource map at path.
func quantity(path string, m map[string]string, key string, milli bool) (int64, bool, error) {
	v, ok := m[key]
	if !ok {
		return 0, false, nil
	}
	var n int64
	var err error
	if milli {
		n, err = trace.QuantityMilli(v)
	} else {
		n, err = trace.QuantityValue(v)
	}
	if err != nil {
		return 0, true, fmt.Errorf("%s%s: %v", path, field(key), err)
	}
	return n, true, nil
}

func readNode(path string, item int, o *kubeObject) (Node, error) {
	n := Node{NodeSpec: trace.NodeSpec{Name: o.Metadata.Name, Line: item}, Replicas: 1, Unschedulable: o.Spec.Unschedulable}
	res, rpath := o.Status.Allocatable, path+".status.allocatable"
	if res == nil {
		res, rpath = o.Status.Capacity, path+".status.capacity"
	}
	labels := o.Metadata.Labels
	whole, milli, err := n.readResources(path, rpath, res, labels)
	if err != nil {
		return n, err
	}
	if ok, err := n.readVendor(path, rpath, res, labels, whole+milli+int64(len(n.MIG))); ok || err != nil {
		return n, err
	}
	n.readSharing(labels, whole, milli)
	gpus, migGPUs, single, err := n.countGPUs(path, labels, whole, milli)
	if err != nil {
		return n, err
	}
	if gpus > cluster.MaxGPUsPerNode {
		return n, fmt.Errorf("%s: %d GPUs, more than %d", rpath, gpus, cluster.MaxGPUsPerNode)
	}
	return n, n.setModel(path, labels, gpus, migGPUs, single)
}

// readResources reads the node's CPU, memory, replica count, MIG devices
// and time-sliced replicas from its allocatable resources res (at rpath)
// and labels, and returns its nvidia.com/gpu devices (or its
// nvidia.com/gpu.shared ones, then n.Shared) and gpuplane.io/gpu-milli.
func (n *Node) readResources(path, rpath string, res map[string]string, labels map[string]string) (whole, milli int64, err error) {
	cpu, _, err := quantity(rpath, res, "cpu", true)
	if err != nil {
		return 0, 0, err
	}
	mem, _, err := quantity(rpath, res, "memory", false)
	if err != nil {
		return 0, 0, err
	}
	n.CPUMilli, n.MemoryMiB = cpu, trace.FloorMiB(mem)
	if r, ok := labels[resource.LabelGPUReplicas]; ok {
		// gpu-feature-discovery writes "0" where no sharing applies: a
		// node whose GPUs are all MIG-enabled (mixed strategy), or
		// "-MIG-INVALID" (its internal/lm/resource.go replicasLabel,
		// mig-strategy.go newInvalidMigStrategyLabeler): one device per
		// device, as "1".
		v, err := strconv.Atoi(r)
		if err != nil || v < 0 {
			return 0, 0, fmt.Errorf("%s.metadata.labels%s: %s is not a count of at least 0", path, field(resource.LabelGPUReplicas), trace.Quote(r))
		}
		// 0 is no replicas: gpu-feature-discovery labels MIG-enabled GPUs
		// without sharing, replicas 0 (github.com/NVIDIA/k8s-device-plugin
		// internal/lm/resource.go getReplicas, mig-strategy.go
		// newGPULabelers: every mixed-strategy node whose GPUs are all
		// MIG-enabled), and a -MIG-INVALID node 0 (newInvalidMigStrategyLabeler;
		// gpuplane's agent too, internal/node/labels).
		n.Replicas = max(v, 1)
	}
	if whole, _, err = quantity(rpath, res, resource.GPU, false); err != nil {
		return 0, 0, err
	}
	if milli, _, err = quantity(rpath, res, resource.GPUMilli, false); err != nil {
		return 0, 0, err
	}
	if err := n.readMIG(rpath, res); err != nil {
		return 0, 0, err
	}
	shared, _, err := quantity(rpath, res, sharedGPU, false)
	if err != nil {
		return 0, 0, err
	}
	if shared > 0 {
		// Time-slicing with renameByDefault: the device plugin serves
		// each GPU as Replicas devices of nvidia.com/gpu.shared, and no
		// nvidia.com/gpu.
		if whole > 0 || milli > 0 || len(n.MIG) > 0 {
			return 0, 0, fmt.Errorf("%s%s: a node that serves nvidia.com/gpu.shared and other GPU resources is not simulated", rpath, field(sharedGPU))
		}
		if shared%int64(n.Replicas) != 0 {
			return 0, 0, fmt.Errorf("%s%s: %d is not a multiple of the node's %s %d (time-slicing advertises each GPU that many times)", rpath, field(sharedGPU), shared, resource.LabelGPUReplicas, n.Replicas)
		}
		whole, n.Shared, n.Renamed = shared, true, true
	}
	if whole%int64(n.Replicas) != 0 {
		// Time-slicing advertises each GPU as Replicas devices.
		return 0, 0, fmt.Errorf("%s%s: %d is not a multiple of the node's %s %d (time-slicing advertises each GPU that many times)", rpath, field(resource.GPU), whole, resource.LabelGPUReplicas, n.Replicas)
	}
	return whole, milli, nil
}

// readMIG reads the node's nvidia.com/mig-<profile> devices into n.MIG.
func (n *Node) readMIG(rpath string, res map[string]string) error {
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.HasPrefix(k, resource.MIGPrefix) {
			v, _, err := quantity(rpath, res, k, false)
			if err != nil {
				return err
			}
			if n.MIG == nil {
				n.MIG = map[string]int64{}
			}
			n.MIG[k] = v
		}
	}
	return nil
}

// countGPUs returns the node's GPUs from its whole (nvidia.com/gpu or
// .shared) devices and milli-GPU, the MIG-enabled ones among them, and,
// under NVIDIA's single MIG strategy, the catalog model its product label
// names.
func (n *Node) countGPUs(path string, labels map[string]string, whole, milli int64) (gpus, migGPUs int64, single string, err error) {
	gpus = whole / int64(n.Replicas)
	if base, profile, ok := singleMIGProduct(labels[resource.LabelGPUProduct]); ok && gpus > 0 && milli == 0 && len(n.MIG) == 0 && !n.Shared {
		// NVIDIA's single MIG strategy: every GPU in one profile, its
		// instances served as nvidia.com/gpu and counted in
		// nvidia.com/gpu.count, the profile in the product's
		// "-MIG-<profile>" suffix (gpuplane's agent: internal/node/labels
		// productLabels). The GPUs hold per instances each, the layout of
		// mig-parted's all-<profile> configs.
		model := gpu.ModelOfProduct(base)
		n.MIG = map[string]int64{resource.MIGPrefix + profile: gpus}
		// Served as nvidia.com/gpu only: a pod asking for
		// nvidia.com/mig-<profile> fits none of them.
		n.MIGAsGPU = true
		setup := gpu.DevicePluginSetup{Replicas: 1, Product: base, MIGProfile: profile}
		if d, ok := setup.Devices(model, gpus); ok {
			n.SingleMIG = profile
			// Each nvidia.com/gpu device is one instance: a pending
			// pod of k devices holds k instances' share of one GPU
			// (cluster.Node.Served), as a running one (servedMIG).
			n.ReplicaMilli = d.ReplicaMilli
			return d.GPUs, d.GPUs, model, nil
		}
	}
	switch {
	case gpus == 0 && milli > 0:
		gpus = milli / cluster.MilliGPU
	case milli == 0 && len(n.MIG) > 0:
		c, ok := labels[resource.LabelGPUCount]
		v, err := strconv.ParseInt(c, 10, 64)
		if gpus == 0 && (!ok || err != nil || v < 0) {
			return 0, 0, "", fmt.Errorf("%s.metadata.labels%s: a node with MIG devices needs its GPU count (got %s)", path, field(resource.LabelGPUCount), trace.Quote(c))
		}
		if ok && err == nil && v > gpus {
			// GPU feature discovery's mixed strategy: the whole GPUs
			// as nvidia.com/gpu, the MIG-enabled ones as their devices.
			gpus, migGPUs = v, v-gpus
		}
	}
	return gpus, migGPUs, "", nil
}

// setModel sets the node's GPU count, product, model (single, under the
// single MIG strategy) and MIG layout of its migGPUs MIG-enabled GPUs.
func (n *Node) setModel(path string, labels map[string]string, gpus, migGPUs int64, single string) error {
	n.GPUs = int(gpus)
	n.Product = labels[resource.LabelGPUProduct]
	n.MIGConfig = labels[resource.LabelMIGConfig]
	if n.GPUs > 0 {
		n.Model = gpu.ModelOfProduct(n.Product)
		if single != "" {
			n.Model = single
		}
		if n.Product == "" {
			n.Model = "unlabelled"
		}
		if len(n.Model) > trace.MaxModelLen {
			return fmt.Errorf("%s.metadata.labels%s: longer than %d characters", path, field(resource.LabelGPUProduct), trace.MaxModelLen)
		}
	}
	if migGPUs > 0 && !n.MIGAsGPU {
		// The mixed strategy: the plugin serves exactly these profiles.
		for k, v := range n.MIG {
			if c := migSlices(strings.TrimPrefix(k, resource.MIGPrefix)); v > 0 && c > 0 {
				n.MIGServed |= 1 << uint(c)
			}
		}
	}
	if migGPUs > 0 {
		n.NodeSpec.MIG = evenMIGLayout(n.MIG, int(migGPUs), n.Model)
		if n.NodeSpec.MIG != nil && migGPUs < gpus {
			n.MIGGPUs = int(migGPUs)
		}
	}
	return nil
}

// singleMIGProduct splits a product label of NVIDIA's single MIG strategy,
// "<product>-MIG-<profile>" with an optional "-SHARED" (gpu-feature-discovery's
// getProductName; gpuplane's labels.Product), into the GPU's product and
// the profile; ok is false for any other label, and for "-MIG-INVALID".
func singleMIGProduct(product string) (base, profile string, ok bool) {
	i := strings.LastIndex(product, "-MIG-")
	if i <= 0 {
		return "", "", false
	}
	base, profile = product[:i], strings.TrimSuffix(product[i+len("-MIG-"):], "-SHARED")
	if _, err := apidra.ParseMIGProfile(profile); err != nil {
		return "", "", false
	}
	return base, profile, true
}

// requests returns a container's requests, a limit standing in for a
// missing request as the API server's defaulting makes it (core/v1
// SetDefaults_Pod: requests default to limits).
func requests(c *kubeContainer) map[string]string {
	out := map[string]string{}
	for k, v := range c.Resources.Limits {
		out[k] = v
	}
	for k, v := range c.Resources.Requests {
		out[k] = v
	}
	return out
}

// sharedGPU is the resource time-slicing with renameByDefault serves.
const sharedGPU = resource.GPU + resource.SharedSuffix

// podResources are the resources the simulator models, in their units.
var podResources = []string{"cpu", "memory", resource.GPU, resource.GPUMilli, sharedGPU, resource.AMDGPU, resource.Gaudi}

// podRequests returns the pod's effective requests of podResources and the
// MIG resources (by profile) as kube-scheduler computes them: each
// container's requests read into api/resource's view (CPU in millicores,
// memory in bytes, GPUs in units, gpu-milli in milli-GPU), then
// resource.PodRequests (k8s.io/component-helpers/resource's PodRequests:
// containers, init containers and sidecars, plus spec.overhead).
func podRequests(path string, o *kubeObject) (map[string]int64, error) {
	read := func(p string, m map[string]string) (map[string]int64, error) {
		out := map[string]int64{}
		for k := range m {
			if !slices.Contains(podResources, k) && !strings.HasPrefix(k, resource.MIGPrefix) {
				continue
			}
			v, _, err := quantity(p, m, k, k != "memory")
			if err != nil {
				return nil, err
			}
			if k != "cpu" && k != "memory" {
				// The API server accepts only whole extended resources
				// (core validation: "must be an integer").
				if v%1000 != 0 {
					return nil, fmt.Errorf("%s%s: %s is not a whole number: an extended resource must be an integer", p, field(k), trace.Quote(m[k]))
				}
				v /= 1000
			}
			out[k] = v
		}
		return out, nil
	}
	if len(o.Spec.Containers) == 0 {
		return nil, fmt.Errorf("%s.spec.containers: none; a pod has at least one container", path)
	}
	view := resource.Pod{Containers: make([]resource.Container, 0, len(o.Spec.InitContainers)+len(o.Spec.Containers))}
	for i := range o.Spec.Containers {
		r, err := read(fmt.Sprintf("%s.spec.containers[%d].resources.requests", path, i), requests(&o.Spec.Containers[i]))
		if err != nil {
			return nil, err
		}
		view.Containers = append(view.Containers, resource.Container{Requests: r})
	}
	for i := range o.Spec.InitContainers {
		c := &o.Spec.InitContainers[i]
		r, err := read(fmt.Sprintf("%s.spec.initContainers[%d].resources.requests", path, i), requests(c))
		if err != nil {
			return nil, err
		}
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == "Always"
		view.Containers = append(view.Containers, resource.Container{Init: true, Sidecar: sidecar, Requests: r})
	}
	over, err := read(path+".spec.overhead", o.Spec.Overhead)
	if err != nil {
		return nil, err
	}
	view.Overhead = over
	return resource.PodRequests(view), nil
}

// notModelled is readPod's answer for a valid pod whose GPU request the
// simulator does not model (several MIG devices or replicas, or those
// with another GPU request): Read leaves the pod out, with a warning.
type notModelled struct{ what string }

func (e notModelled) Error() string { return e.what }

func readPod(path string, item int, o *kubeObject) (Pod, []string, error) {
	name := o.Metadata.Namespace + "/" + o.Metadata.Name
	p := Pod{PodSpec: trace.PodSpec{Name: name, Phase: o.Status.Phase, Line: int32(item), Creation: math.NaN(), Deletion: math.NaN(), Scheduled: math.NaN()}, NodeName: o.Spec.NodeName, MIGStart: -1}
	switch p.Phase {
	case "", "Pending", "Running", "Succeeded", "Failed", "Unknown":
	default:
		return p, nil, fmt.Errorf("%s.status.phase: %s is no pod phase (Pending, Running, Succeeded, Failed, Unknown)", path, trace.Quote(p.Phase))
	}
	req, err := podRequests(path, o)
	if err != nil {
		return p, nil, err
	}
	p.CPUMilli, p.MemoryMiB = req["cpu"], trace.CeilMiB(req["memory"])
	var warn []string
	g, err := resource.GPURequestOf(req)
	var re *resource.RequestError
	switch {
	case errors.As(err, &re) && re.Reason == resource.ReasonMilliRange && re.Milli == 0:
		return p, nil, fmt.Errorf("%s.spec.containers: %v (leave it out for a pod without GPUs)", path, err)
	case err != nil:
		return p, nil, fmt.Errorf("%s.spec.containers: %v", path, err)
	}
	p.NumGPU, p.GPUMilli = int8(g.GPUs), int16(g.Milli)
	if req[resource.GPU] > 0 {
		p.Resource = cluster.ResourceGPU
	}
	if _, milli := req[resource.GPUMilli]; milli {
		// gpuplane's agent advertises it on NVIDIA nodes only.
		p.Resource = cluster.ResourceMilli
	}
	if v := req[sharedGPU]; v > 0 {
		// One replica of a time-sliced GPU: 1000 / the nodes' replicas
		// milli-GPU, set by Read once the nodes are read.
		if v != 1 || p.NumGPU > 0 {
			return p, nil, notModelled{fmt.Sprintf("%s.spec.containers: pod %s asks for %s %d: one replica, and no other GPU request, is what the simulator models", path, trace.Quote(name), sharedGPU, v)}
		}
		p.NumGPU, p.GPUMilli, p.Resource = 1, cluster.MilliGPU, cluster.ResourceShared
	}
	// A MIG device of profile <c>g.<mem>: c of 7 compute slices of one GPU.
	for k, v := range req {
		if !strings.HasPrefix(k, resource.MIGPrefix) || v == 0 {
			continue
		}
		profile := strings.TrimPrefix(k, resource.MIGPrefix)
		c := migSlices(profile)
		if c == 0 || v != 1 || p.NumGPU > 0 || req[sharedGPU] > 0 {
			return p, nil, notModelled{fmt.Sprintf("%s.spec.containers: pod %s asks for %s %d: one MIG device of a profile <1..7>g.*, and no other GPU request, is what the simulator models", path, trace.Quote(name), k, v)}
		}
		// MIG's share rule, rounded down, so that --sharing mig maps the
		// share back to a profile of c slices (gpu.MIGShareMilli).
		p.NumGPU, p.GPUMilli, p.Resource = 1, int16(gpu.MIGShareMilli(c)), cluster.ResourceMIG
		warn = append(warn, fmt.Sprintf("%s: pod %s asks for %s: simulated as %d milli-GPU, under --sharing mig as the smallest profile of %d compute slices, else as a share of a MIG-enabled GPU (a GPU without MIG serves no MIG device)", path, trace.Quote(name), k, p.GPUMilli, c))
	}
	if err := vendorRequest(path, name, req, &p); err != nil {
		return p, nil, err
	}
	models, w := podModels(path, o)
	warn = append(warn, w...)
	if models != nil {
		p.GPUSpec = strings.Join(models, "|")
	}
	if s, ok := o.Metadata.Annotations[resource.AnnotationGPUs]; ok && p.NodeName != "" {
		for _, f := range strings.Split(s, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 || i >= cluster.MaxGPUsPerNode {
				return p, nil, fmt.Errorf("%s.metadata.annotations%s: %s is not a list of GPU indices", path, field(resource.AnnotationGPUs), trace.Quote(s))
			}
			p.GPUs = append(p.GPUs, i)
		}
	}
	return p, warn, nil
}

// podModels returns the GPU models a pod allows (nil: any): the
// gpuplane.io/gpu-model annotation (catalog names joined by '|'), the
// nodeSelector on nvidia.com/gpu.product, and the In expressions on that
// label of its required node affinity (terms ORed, expressions ANDed),
// intersected; products map to catalog models with gpu.ModelOfProduct.
// An empty intersection is the model NoModel, which no node has.
func podModels(path string, o *kubeObject) ([]string, []string) {
	var sets [][]string
	var warn []string
	if a, ok := o.Metadata.Annotations[resource.AnnotationGPUModel]; ok {
		var s []string
		for _, m := range strings.Split(a, "|") {
			if m = strings.TrimSpace(m); m != "" {
				s = append(s, m)
			}
		}
		sets = append(sets, s)
	}
	if v, ok := o.Spec.NodeSelector[resource.LabelGPUProduct]; ok {
		sets = append(sets, []string{gpu.ModelOfProduct(v)})
	}
	if a := o.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.Required != nil {
		var union []string
		any := false
		for _, t := range a.NodeAffinity.Required.Terms {
			var term []string
			constrained := false
			for _, e := range t.Expressions {
				if e.Key != resource.LabelGPUProduct {
					continue
				}
				if e.Operator != "In" {
					// The pod's Filter holds it, exactly (podFilter).
					continue
				}
				var vals []string
				for _, v := range e.Values {
					vals = append(vals, gpu.ModelOfProduct(v))
				}
				if constrained {
					term = intersect(term, vals)
				} else {
					term, constrained = vals, true
				}
			}
			if !constrained {
				any = true
			}
			for _, m := range term {
				if !slices.Contains(union, m) {
					union = append(union, m)
				}
			}
		}
		if !any && len(a.NodeAffinity.Required.Terms) > 0 {
			sets = append(sets, union)
		}
	}
	if len(sets) == 0 {
		return nil, warn
	}
	out := sets[0]
	for _, s := range sets[1:] {
		out = intersect(out, s)
	}
	if len(out) == 0 {
		warn = append(warn, fmt.Sprintf("%s: pod %s/%s: its GPU model constraints (annotation, nodeSelector, node affinity) allow no model together",
			path, o.Metadata.Namespace, o.Metadata.Name))
		return []string{NoModel}, warn
	}
	return out, warn
}

func intersect(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			if strings.EqualFold(x, y) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// evenMIGLayout returns the MIG layout of each of a node's gpus GPUs of
// model when its MIG devices (count by resource name) divide evenly among
// them and the model takes that layout (gpu.PlaceMIG); nil otherwise.
func evenMIGLayout(devices map[string]int64, gpus int, model string) []string {
	keys := make([]string, 0, len(devices))
	for k := range devices {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var layout []string
	for _, k := range keys {
		v := devices[k]
		if v%int64(gpus) != 0 {
			return nil
		}
		for range v / int64(gpus) {
			layout = append(layout, strings.TrimPrefix(k, resource.MIGPrefix))
		}
	}
	if len(layout) == 0 {
		return nil
	}
	if _, err := gpu.PlaceMIG(model, layout); err != nil {
		return nil
	}
	return layout
}
