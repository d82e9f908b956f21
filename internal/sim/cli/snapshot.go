// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/snapshot"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// checkSnapshot checks --snapshot and --snapshot-empty against the other
// flags.
func (o Options) checkSnapshot() error {
	switch {
	case o.SnapshotFile == "" && o.SnapshotEmpty:
		return errors.New("--snapshot-empty needs --snapshot")
	case o.SnapshotFile == "":
		return nil
	case o.NodesFile != "" || o.PodsFile != "":
		return errors.New("--snapshot gives the nodes and pods: leave out --nodes and --pods")
	case o.Mode != "fill":
		return errors.New("--snapshot has no arrival times: it runs in --mode fill")
	case o.InflateSet:
		return errors.New("--snapshot submits each pod once and takes no --inflate")
	}
	return nil
}

// snapshotRun is what Run simulates of a Kubernetes snapshot.
type snapshotRun struct {
	nodes []trace.NodeSpec
	// pods are the pods to place: the pending ones, or with
	// --snapshot-empty every pod that has not ended.
	pods []trace.PodSpec
	// bound are the running pods put in place first (none with
	// --snapshot-empty); --size puts them in place in every step too, so
	// it sizes the cluster for the pending pods only.
	bound []engine.Bound
	// cordoned names the nodes with spec.unschedulable: --size never
	// grows their node type.
	cordoned map[string]bool
}

// readSnapshot reads --snapshot and splits its pods; what the simulator
// does not model goes to stderr as warnings.
func readSnapshot(o Options, stderr io.Writer) (*snapshotRun, engine.Input, error) {
	var s *snapshot.Snapshot
	in, err := readInput("snapshot", o.SnapshotFile, func(f *os.File) (err error) { s, err = snapshot.Read(o.SnapshotFile, f); return err })
	if err != nil {
		return nil, in, err
	}
	warn := func(format string, a ...any) { fmt.Fprintf(stderr, "simulate: warning: "+format+"\n", a...) }
	for _, w := range s.Warnings {
		warn("%s", w)
	}
	out := &snapshotRun{cordoned: map[string]bool{}}
	mig, layouts := 0, 0
	for _, n := range s.Nodes {
		out.nodes = append(out.nodes, n.NodeSpec)
		if n.Unschedulable {
			out.cordoned[n.Name] = true
		}
		switch {
		case n.NodeSpec.MIG != nil:
			layouts++
		case len(n.MIG) > 0 || n.MIGConfig != "":
			mig++
		}
	}
	if layouts > 0 && !strings.Contains(strings.ToLower(o.Sharing), "mig") {
		warn("%s: %d nodes have MIG devices in one layout per MIG-enabled GPU: simulated as whole GPUs that serve MIG-device pods as shares and no nvidia.com/gpu pod; --sharing mig simulates their layouts", o.SnapshotFile, layouts)
	}
	draWarnings(o, s, warn)
	if mig > 0 {
		warn("%s: %d nodes have MIG devices or a %s label but no one layout for every MIG-enabled GPU (counts that do not divide among them, or no %s label to count them): simulated as whole GPUs", o.SnapshotFile, mig, resource.LabelMIGConfig, resource.LabelGPUCount)
	}
	whole := o.SnapshotEmpty
	pending, ended := 0, 0
	for _, p := range s.Pods {
		switch {
		case p.Pending():
			pending++
			out.pods = append(out.pods, p.PodSpec)
		case !p.Bound():
			ended++
		case whole:
			out.pods = append(out.pods, p.PodSpec)
		default:
			out.bound = append(out.bound, engine.Bound{Node: p.NodeName, Pod: p.PodSpec, GPUs: p.GPUs, MIGProfile: p.MIGProfile, MIGStart: p.MIGStart})
		}
	}
	if len(s.Nodes) == 0 {
		return nil, in, fmt.Errorf("%s: no nodes", o.SnapshotFile)
	}
	if len(out.pods) == 0 {
		if whole {
			return nil, in, fmt.Errorf("%s: no pods that have not ended", o.SnapshotFile)
		}
		if o.Size != "" {
			return nil, in, fmt.Errorf("%s: every pod runs or has ended: the cluster is not short, --size has no pending pod to size it for (--snapshot-empty --size sizes for all of them on empty nodes)", o.SnapshotFile)
		}
		return nil, in, fmt.Errorf("%s: no pending pods to place (--snapshot-empty simulates the running ones on empty nodes)", o.SnapshotFile)
	}
	if ended > 0 {
		fmt.Fprintf(stderr, "simulate: %s: %d nodes, %d pending pods, %d running, %d ended (left out)\n", o.SnapshotFile, len(s.Nodes), pending, len(s.Pods)-pending-ended, ended)
	}
	return out, in, nil
}

// draWarnings warns of what a snapshot's DRA nodes (GPUs from
// ResourceSlices) need to run as the cluster is: --gpu-api dra for
// upstream's allocator's choice of GPU in a node, and --sharing mig for
// the GPUs that publish MIG on demand; and that pods asking for
// nvidia.com/gpu take no DRA-only node when no DeviceClass maps it.
func draWarnings(o Options, s *snapshot.Snapshot, warn func(string, ...any)) {
	dra, dynamic, unmapped := 0, 0, 0
	for _, n := range s.Nodes {
		if n.DRA {
			dra++
			if n.DynamicMIG {
				dynamic++
			}
		}
		if n.Serving == cluster.ServedByDRA && n.GPUs > 0 {
			unmapped++
		}
	}
	if asking := gpuAsking(s.Pods); unmapped > 0 && asking > 0 {
		warn("%s: %d nodes serve their GPUs by DRA only and no DeviceClass of the List maps %s (spec.extendedResourceName): the %d pods asking for %s fit none of them", o.SnapshotFile, unmapped, resource.GPU, asking, resource.GPU)
	}
	if dra > 0 && o.GPUAPI != placement.DRA.String() {
		warn("%s: %d nodes serve their GPUs by DRA (ResourceSlices of %s): simulated with the policy's choice of GPU in a node; --gpu-api dra simulates upstream's allocator's", o.SnapshotFile, dra, apidra.DriverName)
	}
	if dynamic > 0 && (o.GPUAPI != placement.DRA.String() || !strings.Contains(strings.ToLower(o.Sharing), "mig")) {
		warn("%s: %d DRA nodes publish MIG placements (MIG on demand): simulated as whole GPUs that serve MIG claims as shares; --gpu-api dra --sharing mig simulates MIG on demand", o.SnapshotFile, dynamic)
	}
}

// gpuAsking counts the pods that ask for the extended resource
// nvidia.com/gpu (not by a claim) and have not ended.
func gpuAsking(pods []snapshot.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Resource == cluster.ResourceGPU && (p.Pending() || p.Bound()) {
			n++
		}
	}
	return n
}

// snapshotOutcomes gathers where the runs placed each pod (each arrives
// once per run, Config.Once), in the pod list's order, then policy order.
func snapshotOutcomes(rep *engine.Report, pods []trace.PodSpec) []engine.PodOutcome {
	var policies []string
	polIndex := map[string]int{}
	for _, r := range rep.Results {
		if _, ok := polIndex[r.Policy]; !ok {
			polIndex[r.Policy] = len(policies)
			policies = append(policies, r.Policy)
		}
	}
	podIndex := make(map[string]int, len(pods))
	for i, p := range pods {
		podIndex[p.Name] = i
	}
	out := make([]engine.PodOutcome, len(pods)*len(policies))
	for i, p := range pods {
		for j, pol := range policies {
			out[i*len(policies)+j] = engine.PodOutcome{Pod: p.Name, Policy: pol}
		}
	}
	for _, r := range rep.Results {
		for _, p := range r.Placements {
			i, ok := podIndex[p.Pod]
			if !ok {
				continue
			}
			o := &out[i*len(policies)+polIndex[r.Policy]]
			o.Runs++
			if p.Node != "" {
				o.Placed++
			}
			if r.Seed == rep.Results[0].Seed {
				o.Node, o.Reason = p.Node, p.Reason
				if p.Node != "" {
					o.GPUs = p.GPUs.Indices()
				}
			}
		}
	}
	return out
}
