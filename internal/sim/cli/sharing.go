// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// runSharing runs the workload under each mode of --sharing and leaves in
// *rep the first mode's report with the comparison of all and every mode's
// runs (Report.Sharing, SharingReport.Modes).
// The bound pods (a snapshot's running ones) are put in place under each
// mode as it gives them GPUs. It returns the mig-parted config it read, if
// any, as an input. With --placements, *placed gets the runs of every mode.
func runSharing(ctx context.Context, o Options, w *engine.Workload, nodes []trace.NodeSpec, bound []engine.Bound, cfg engine.Config, stderr io.Writer, rep **engine.Report, placed *[]engine.Result) (*engine.Input, error) {
	modes, err := engine.ParseSharing(o.Sharing)
	if err != nil {
		return nil, fmt.Errorf("--sharing: %w", err)
	}
	var given engine.GivenMIG
	var in *engine.Input
	for i, m := range modes {
		if m.Mode != "mig" {
			continue
		}
		if cfg.GPUAPI == placement.DRA {
			// DRA makes MIG instances per claim: no layouts.
			modes[i].OnDemand = true // Options.check refuses --mig-config
		} else if given, in, err = givenMIG(o, nodes, bound, stderr); err != nil {
			return nil, BadInput(err) // --mig-config or the nodes' layouts
		}
		migModels := false
		for _, n := range nodes {
			migModels = migModels || (n.GPUs > 0 && len(gpu.MIGProfiles(canonical(n.Model))) > 0)
		}
		if !migModels {
			fmt.Fprintln(stderr, "simulate: warning: --sharing mig: no node has a MIG-capable GPU model (A100, H100, H100-NVL, H20, GH200, H200, B200): every share takes a whole GPU, as in exclusive")
		}
	}
	sr := &engine.SharingReport{}
	warned := map[string]bool{}
	for k, m := range modes {
		v, layouts, err := w.WithSharing(m, given, o.Popularity)
		if err != nil {
			return nil, fmt.Errorf("--sharing %s: %w", m, err)
		}
		if len(bound) > 0 {
			warnPartitionBound(m, nodes, bound, stderr)
			msgs, err := v.Bind(o.SnapshotFile, bound)
			if err != nil {
				return nil, fmt.Errorf("--sharing %s: %w", m, err)
			}
			for _, msg := range msgs {
				if !warned[msg] {
					warned[msg] = true
					fmt.Fprintf(stderr, "simulate: warning: --sharing %s: %s\n", m, msg)
				}
			}
		}
		c := cfg
		if k > 0 {
			c.Placements = o.PlacementsFile != ""
		}
		r, err := runWithProgress(ctx, v, c, stderr)
		if err != nil {
			return nil, fmt.Errorf("--sharing %s: %w", m, err)
		}
		if k == 0 {
			*rep = r
		}
		if o.PlacementsFile != "" {
			*placed = append(*placed, r.Results...)
		}
		sr.Rows = append(sr.Rows, engine.SharingRows(r)...)
		sr.Modes = append(sr.Modes, engine.ModeRuns{Sharing: m.String(), Summary: r.Summary, Results: r.Results})
		if m.Mode == "mig" {
			sr.MIGLayouts = layouts
		}
		sr.Partitions = append(sr.Partitions, v.Partitions()...)
	}
	(*rep).Sharing = sr
	return in, nil
}

// warnPartitionBound warns to stderr, under a partition mode m, of the
// running pods bound to AMD nodes whose model has m: they are put in place
// as the snapshot gives them (its GPU indices and amd.com/gpu count, of
// the node's own layout), not converted to m's partitions.
func warnPartitionBound(m engine.Sharing, nodes []trace.NodeSpec, bound []engine.Bound, stderr io.Writer) {
	if m.Partition == (gpu.Partition{}) {
		return
	}
	laid := map[string]bool{}
	for _, n := range nodes {
		_, err := gpu.Partitions(canonical(n.Model), m.Partition)
		laid[n.Name] = n.GPUs > 0 && gpu.VendorOf(n.Model) == gpu.AMD && err == nil
	}
	k := 0
	for _, b := range bound {
		if laid[b.Node] && b.Pod.NumGPU > 0 {
			k++
		}
	}
	if k > 0 {
		fmt.Fprintf(stderr, "simulate: warning: --sharing %s: %d running pods on AMD nodes laid out in %s are put in place as the snapshot gives them (its GPUs, of the node's own layout), not converted to %s partitions\n", m, k, m.Partition, m.Partition)
	}
}

// migConfigSelects checks that configuration c selects some GPU of nodes,
// and warns to stderr (nil: not) of each entry that selects none: a
// device-filter naming no model of the nodes, or devices past their GPUs.
func migConfigSelects(file string, c *trace.MIGConfig, nodes []trace.NodeSpec, stderr io.Writer) error {
	maxGPUs, any := 0, false
	unused := make([]bool, len(c.Entries))
	for k := range c.Entries {
		e := &c.Entries[k]
		unused[k] = true
		for _, n := range nodes {
			maxGPUs = max(maxGPUs, n.GPUs)
			for g := 0; g < n.GPUs && unused[k]; g++ {
				if e.Selects(canonical(n.Model), g) {
					unused[k], any = false, true
				}
			}
		}
	}
	if !any {
		return fmt.Errorf("%s: mig-configs.%s selects no GPU of the nodes (device-filter and devices; the nodes have up to %d GPUs): it would leave every GPU whole", file, trace.Quote(c.Name), maxGPUs)
	}
	for k, u := range unused {
		if u && stderr != nil {
			fmt.Fprintf(stderr, "simulate: warning: %s:%d: mig-configs.%s[%d] selects no GPU of the nodes (device-filter and devices; the nodes have up to %d GPUs)\n", file, c.Entries[k].Line, trace.Quote(c.Name), k, maxGPUs)
		}
	}
	return nil
}

// canonical returns the catalog spelling of a model name, or the name.
func canonical(model string) string {
	id, err := gpu.ModelID(model)
	if err != nil {
		return model
	}
	return gpu.ModelName(id)
}

// givenMIG returns the MIG layouts the user gave: the --mig-config file's,
// else the cluster YAML's mig fields (or a snapshot's layouts); nil when
// neither gives any (the simulator chooses). Each layout is checked
// against its node's model. A --mig-config that selects no GPU of the
// nodes is an error; an entry of it that selects none is a warning to
// stderr (nil: none). A GPU that a bound pod of whole GPUs holds (its
// gpuplane.io/gpus annotation) is left whole, with a warning naming the
// pod; of a snapshot node with some GPUs whole (NodeSpec.MIGGPUs), the
// MIG-enabled ones are the first that no such pod holds.
func givenMIG(o Options, nodes []trace.NodeSpec, bound []engine.Bound, stderr io.Writer) (engine.GivenMIG, *engine.Input, error) {
	m := &migLayouts{layouts: make([][][]string, len(nodes)), holder: wholeGPUHolders(bound), stderr: stderr}
	if o.MIGConfig != "" {
		in, err := m.fromConfig(o, nodes)
		if err != nil {
			return nil, nil, err
		}
		return m.given(), &in, nil
	}
	m.fromNodes(o.SnapshotFile, nodes)
	if !m.gave {
		return nil, nil, nil
	}
	return m.given(), nil, nil
}

// migLayouts are the MIG layouts givenMIG collects, by node and GPU.
type migLayouts struct {
	layouts [][][]string
	holder  map[string]map[int]string // node name, GPU: the bound pod of whole GPUs on it
	stderr  io.Writer
	gave    bool
}

// wholeGPUHolders returns, by node name and GPU, the bound pods of whole
// GPUs.
func wholeGPUHolders(bound []engine.Bound) map[string]map[int]string {
	holder := map[string]map[int]string{}
	for _, b := range bound {
		if b.Pod.GPUMilli < cluster.MilliGPU {
			continue // a share: a MIG instance under mig (engine.Workload.Bind)
		}
		for _, g := range b.GPUs {
			if holder[b.Node] == nil {
				holder[b.Node] = map[int]string{}
			}
			holder[b.Node][g] = b.Pod.Name
		}
	}
	return holder
}

// held reports whether GPU g of n is held, and warns that where names a
// layout for it that is left out.
func (m *migLayouts) held(n trace.NodeSpec, g int, where string) bool {
	pod, ok := m.holder[n.Name][g]
	if ok && m.stderr != nil {
		fmt.Fprintf(m.stderr, "simulate: warning: %s: node %s GPU %d is held by running pod %s (annotation gpuplane.io/gpus): left whole\n", where, trace.Quote(n.Name), g, trace.Quote(pod))
	}
	return ok
}

// fromConfig takes the layouts of the --mig-config file, and returns it as
// an input.
func (m *migLayouts) fromConfig(o Options, nodes []trace.NodeSpec) (engine.Input, error) {
	var c *trace.MIGConfig
	in, err := readInput("mig-config", o.MIGConfig, func(f *os.File) (err error) {
		c, err = trace.ReadMIGConfig(o.MIGConfig, f, o.MIGConfigName)
		return err
	})
	if err != nil {
		return engine.Input{}, err
	}
	for i, n := range nodes {
		if err := m.configNode(o.MIGConfig, c, i, n); err != nil {
			return engine.Input{}, err
		}
	}
	if err := migConfigSelects(o.MIGConfig, c, nodes, m.stderr); err != nil {
		return engine.Input{}, err
	}
	return in, nil
}

// configNode takes the layouts that configuration c of file gives the
// GPUs of node i, n, checked against its model.
func (m *migLayouts) configNode(file string, c *trace.MIGConfig, i int, n trace.NodeSpec) error {
	if n.GPUs == 0 {
		return nil
	}
	model := canonical(n.Model)
	for g := range n.GPUs {
		l, line := c.Layout(model, g)
		if l == nil {
			continue
		}
		if _, err := gpu.PlaceMIG(model, l); err != nil {
			return fmt.Errorf("%s:%d: mig-configs.%s: node %s GPU %d: %v", file, line, trace.Quote(c.Name), trace.Quote(n.Name), g, err)
		}
		if m.held(n, g, fmt.Sprintf("%s:%d: mig-configs.%s", file, line, trace.Quote(c.Name))) {
			continue
		}
		if m.layouts[i] == nil {
			m.layouts[i] = make([][]string, n.GPUs)
		}
		m.layouts[i][g], m.gave = l, true
	}
	return nil
}

// fromNodes takes the layouts of the nodes' mig fields (a cluster YAML's,
// or a snapshot's).
func (m *migLayouts) fromNodes(snapshotFile string, nodes []trace.NodeSpec) {
	for i, n := range nodes {
		if n.MIG == nil || n.GPUs == 0 {
			continue
		}
		m.layouts[i] = make([][]string, n.GPUs)
		m.gave = true
		if n.MIGGPUs > 0 {
			m.someWhole(snapshotFile, i, n)
			continue
		}
		for g := range m.layouts[i] {
			if !m.held(n, g, fmt.Sprintf("%s:%d", snapshotFile, n.Line)) {
				m.layouts[i][g] = n.MIG
			}
		}
	}
}

// someWhole lays out snapshot node i, n, with some GPUs whole: the
// MIG-enabled ones are the first that no running pod of whole GPUs holds.
func (m *migLayouts) someWhole(snapshotFile string, i int, n trace.NodeSpec) {
	left := n.MIGGPUs
	for g := 0; g < n.GPUs && left > 0; g++ {
		if _, ok := m.holder[n.Name][g]; !ok {
			m.layouts[i][g] = n.MIG
			left--
		}
	}
	if left > 0 && m.stderr != nil {
		fmt.Fprintf(m.stderr, "simulate: warning: %s:%d: node %s: running pods of whole GPUs hold all but %d of its GPUs, which has %d MIG-enabled: %d left whole\n", snapshotFile, n.Line, trace.Quote(n.Name), n.MIGGPUs-left, n.MIGGPUs, left)
	}
}

// given returns the layouts as the engine takes them.
func (m *migLayouts) given() engine.GivenMIG {
	layouts := m.layouts
	return func(node, g int) []string {
		if layouts[node] == nil {
			return nil
		}
		return layouts[node][g]
	}
}
