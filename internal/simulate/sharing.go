package simulate

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/sim"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// runSharing runs the workload under each mode of --sharing and leaves in
// *rep the first mode's report with the comparison of all (Report.Sharing).
// It returns the mig-parted config it read, if any, as an input.
func runSharing(ctx context.Context, o Options, w *sim.Workload, nodes []trace.NodeSpec, cfg sim.Config, stderr io.Writer, rep **sim.Report) (*sim.Input, error) {
	modes, err := sim.ParseSharing(o.Sharing)
	if err != nil {
		return nil, fmt.Errorf("--sharing: %w", err)
	}
	var given sim.GivenMIG
	var in *sim.Input
	for _, m := range modes {
		if m.Mode != "mig" {
			continue
		}
		if given, in, err = givenMIG(o, nodes); err != nil {
			return nil, err
		}
		migModels := false
		for _, n := range nodes {
			migModels = migModels || (n.GPUs > 0 && len(gpu.MIGProfiles(canonical(n.Model))) > 0)
		}
		if !migModels {
			fmt.Fprintln(stderr, "simulate: warning: --sharing mig: no node has a MIG-capable GPU model (A100, H100, H200): every share takes a whole GPU, as in exclusive")
		}
	}
	sr := &sim.SharingReport{}
	for k, m := range modes {
		v, layouts, err := w.WithSharing(m, given, o.Popularity)
		if err != nil {
			return nil, fmt.Errorf("--sharing %s: %w", m, err)
		}
		c := cfg
		if k > 0 {
			c.Placements, c.NodeDetail = false, false
		}
		r, err := sim.Run(ctx, v, c)
		if err != nil {
			return nil, fmt.Errorf("--sharing %s: %w", m, err)
		}
		if k == 0 {
			*rep = r
		}
		sr.Rows = append(sr.Rows, sim.SharingRows(r)...)
		if m.Mode == "mig" {
			sr.MIGLayouts = layouts
		}
	}
	(*rep).Sharing = sr
	return in, nil
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
// else the cluster YAML's mig fields; nil when neither gives any (the
// simulator chooses). Each layout is checked against its node's model.
func givenMIG(o Options, nodes []trace.NodeSpec) (sim.GivenMIG, *sim.Input, error) {
	layouts := make([][][]string, len(nodes))
	gave := false
	if o.MIGConfig != "" {
		var c *trace.MIGConfig
		in, err := readInput("mig-config", o.MIGConfig, func(f *os.File) (err error) {
			c, err = trace.ReadMIGConfig(o.MIGConfig, f, o.MIGConfigName)
			return err
		})
		if err != nil {
			return nil, nil, err
		}
		for i, n := range nodes {
			if n.GPUs == 0 {
				continue
			}
			model := canonical(n.Model)
			for g := range n.GPUs {
				l, line := c.Layout(model, g)
				if l == nil {
					continue
				}
				if _, err := gpu.PlaceMIG(model, l); err != nil {
					return nil, nil, fmt.Errorf("%s:%d: mig-configs.%s: node %s GPU %d: %v", o.MIGConfig, line, trace.Quote(c.Name), trace.Quote(n.Name), g, err)
				}
				if layouts[i] == nil {
					layouts[i] = make([][]string, n.GPUs)
				}
				layouts[i][g], gave = l, true
			}
		}
		return func(node, g int) []string {
			if layouts[node] == nil {
				return nil
			}
			return layouts[node][g]
		}, &in, nil
	}
	for i, n := range nodes {
		if n.MIG != nil && n.GPUs > 0 {
			layouts[i] = make([][]string, n.GPUs)
			for g := range layouts[i] {
				layouts[i][g] = n.MIG
			}
			gave = true
		}
	}
	if !gave {
		return nil, nil, nil
	}
	return func(node, g int) []string {
		if layouts[node] == nil {
			return nil
		}
		return layouts[node][g]
	}, nil, nil
}
