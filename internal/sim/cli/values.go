// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// chartValues are the values of the gpuplane chart (deploy/helm/gpuplane,
// values.yaml) that a recommendation sets: the scheduler's policy and
// tie-break and, for the sharing mode, the node agent's configuration
// (NVIDIA's device-plugin format) and the MIG layouts (NVIDIA's mig-parted
// format). Keys in the chart's order.
type chartValues struct {
	NodeAgent  *nodeAgentValues  `yaml:"nodeAgent,omitempty"`
	Config     *agentConfig      `yaml:"config,omitempty"`
	Scheduler  schedulerValues   `yaml:"scheduler"`
	MIGManager *migManagerValues `yaml:"migManager,omitempty"`
}

type schedulerValues struct {
	Enabled  bool   `yaml:"enabled"`
	Policy   string `yaml:"policy"`
	TieBreak string `yaml:"tieBreak"`
}

type nodeAgentValues struct {
	KubeletAPI string     `yaml:"kubeletAPI"`
	DRA        *draValues `yaml:"dra,omitempty"`
}

type draValues struct {
	Shares bool `yaml:"shares"`
	// MIGOrder is the order the driver publishes MIG placements in, as
	// simulated (--dra-mig-order; the chart's nodeAgent.dra.migOrder).
	MIGOrder string `yaml:"migOrder,omitempty"`
}

// agentConfig is the subset of api/config/v1 (NVIDIA's device-plugin
// configuration, plus the gpuplane section) a sharing mode sets.
type agentConfig struct {
	Version  string          `yaml:"version"`
	Flags    *agentFlags     `yaml:"flags,omitempty"`
	Sharing  *agentSharing   `yaml:"sharing,omitempty"`
	Gpuplane *agentExtension `yaml:"gpuplane,omitempty"`
}

type agentFlags struct {
	MIGStrategy string `yaml:"migStrategy"`
}

type agentSharing struct {
	TimeSlicing struct {
		Resources []replicatedResource `yaml:"resources"`
	} `yaml:"timeSlicing"`
}

type replicatedResource struct {
	Name     string `yaml:"name"`
	Replicas int    `yaml:"replicas"`
}

type agentExtension struct {
	MilliGPU bool `yaml:"milliGPU"`
}

type migManagerValues struct {
	Config migPartedConfig `yaml:"config"`
}

// migPartedConfig is an NVIDIA mig-parted config file (trace.ReadMIGConfig
// reads it back): one named configuration per node group.
type migPartedConfig struct {
	Version    string                    `yaml:"version"`
	MIGConfigs map[string][]migPartedGPU `yaml:"mig-configs"`
}

type migPartedGPU struct {
	Devices    any        `yaml:"devices"` // "all" or GPU indices
	MIGEnabled bool       `yaml:"mig-enabled"`
	MIGDevices migDevices `yaml:"mig-devices,omitempty"`
}

// migDevices are the MIG devices a mig-parted configuration makes, by
// profile: nil (a GPU without MIG) is left out, an empty map written {}
// (MIG mode with no instance, as NVIDIA's "all-enabled" configuration
// has it: MIG on demand, whose instances the DRA driver makes per claim).
type migDevices map[string]int

// IsZero makes yaml's omitempty leave out only a nil map.
func (m migDevices) IsZero() bool { return m == nil }

// migConfigLabel is the node label that selects a node's configuration
// of a mig-parted config (the GPU Operator's MIG manager reads it).
const migConfigLabel = "nvidia.com/mig.config"

// writeValues writes rep's recommendation as values of the gpuplane chart
// (-o values), with a header of comments saying what was simulated and,
// under mig, which nodes to label with which MIG configuration.
func writeValues(w io.Writer, rep *engine.Report) error {
	rec := rep.Recommendation
	if rec == nil || rep.Params == nil {
		return errors.New("-o values: the run recommends nothing")
	}
	if rec.Verdict == "infeasible" {
		return errors.New("-o values: no configuration simulated is feasible (the best places fewer than half the arrived pods): nothing to deploy")
	}
	policy := rec.Policy
	keep := rec.Verdict == "tie" || keepsDefault(rep)
	if keep {
		policy = placement.DefaultPolicy
	}
	v := chartValues{Scheduler: schedulerValues{Enabled: true, Policy: policy, TieBreak: rep.Params.TieBreak}}
	groups, err := v.setSharing(rec.Sharing, rep.Params.GPUAPI == "dra", rep)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Values of the gpuplane chart (deploy/helm/gpuplane) for gpuplane simulate's\n")
	recPolicy := rec.Policy
	if recPolicy == "" {
		recPolicy = "any (" + rec.Verdict + ")"
	}
	fmt.Fprintf(&b, "# recommendation: policy %s, tie-break %s, sharing %s.\n", recPolicy, rep.Params.TieBreak, rec.Sharing)
	fmt.Fprintf(&b, "#   helm install gpuplane deploy/helm/gpuplane -f THIS_FILE\n")
	fmt.Fprintf(&b, "# Simulated: %s, mode %s.\n", oneLine(rep.Source), rep.Mode)
	if rec.Reason != "" {
		fmt.Fprintf(&b, "# Why: %s\n", oneLine(rec.Reason))
	}
	switch {
	case rec.Verdict == "tie":
		fmt.Fprintf(&b, "# No policy differs on this workload: the default is kept (%s, the chart's).\n", placement.DefaultPolicy)
	case keep:
		fmt.Fprintf(&b, "# %s, the chart's default, allocates as much as %s: the default is kept.\n", placement.DefaultPolicy, rec.Policy)
	}
	if len(groups) > 0 {
		fmt.Fprintf(&b, "# MIG: give migManager.config to the GPU Operator's MIG manager (ClusterPolicy\n")
		fmt.Fprintf(&b, "# migManager.config.name: the ConfigMap <fullname>-mig-parted-config) and label\n")
		fmt.Fprintf(&b, "# each node group's nodes with its configuration (GPU nodes not listed were\n")
		fmt.Fprintf(&b, "# simulated without MIG):\n")
		for _, g := range groups {
			fmt.Fprintf(&b, "#   %s\n", g)
		}
	}
	if d := v.NodeAgent; d != nil && d.DRA != nil && d.DRA.MIGOrder == "core" {
		fmt.Fprintf(&b, "# MIG on demand: the node agent ranks MIG placements against the built-in\n")
		fmt.Fprintf(&b, "# target workload (--dra-target-workload-file, which the chart does not set);\n")
		fmt.Fprintf(&b, "# this run ranked them against its own pods.\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// keepsDefault reports whether a fill's recommended policy allocates no
// more than the chart's default policy (placement.DefaultPolicy) under the
// same sharing mode, as when every policy ties: then the values keep the
// default rather than name whichever policy ranked first.
func keepsDefault(rep *engine.Report) bool {
	rec := rep.Recommendation
	if rep.Mode != "fill" || rec.Policy == placement.DefaultPolicy {
		return false
	}
	alloc := map[string]float64{}
	if rep.Sharing != nil && len(rep.Sharing.Rows) > 0 {
		for _, row := range rep.Sharing.Rows {
			if row.Sharing == rec.Sharing {
				alloc[row.Policy] = row.GPUAllocationRatio
			}
		}
	} else {
		for _, s := range rep.Summary {
			alloc[s.Policy] = s.GPUAllocationRatioMean
		}
	}
	def, ok := alloc[placement.DefaultPolicy]
	chosen, ok2 := alloc[rec.Policy]
	return ok && ok2 && def >= chosen
}

// oneLine returns s with its line breaks as spaces, for a comment.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// setSharing sets the node agent's values for sharing mode sharing
// (engine.Sharing.String), under the DRA kubelet API when dra, and
// returns, under mig, one line per node group saying which nodes get
// which MIG configuration.
func (v *chartValues) setSharing(sharing string, dra bool, rep *engine.Report) ([]string, error) {
	if dra {
		v.NodeAgent = &nodeAgentValues{KubeletAPI: "dra"}
	}
	switch {
	case strings.Contains(sharing, "partition:"):
		// An AMD GPU's partition mode is set on the node (amd-smi, or the
		// AMD GPU Operator's Device Config Manager), which gpuplane's node
		// agent, NVIDIA's, does not serve.
		return nil, fmt.Errorf("-o values: sharing %s: the AMD partition mode is set on the AMD nodes (amd-smi set, or the AMD GPU Operator's Device Config Manager), not in gpuplane's chart", sharing)
	case sharing == "exclusive":
	case sharing == "fractional" && dra:
		v.NodeAgent.DRA = &draValues{Shares: true}
	case sharing == "fractional":
		v.Config = &agentConfig{Version: "v1", Gpuplane: &agentExtension{MilliGPU: true}}
	case sharing == "mig" && dra: // MIG on demand: MIG mode, no instances
		// stale measures the core order's window: the chart's core.
		v.NodeAgent.DRA = &draValues{MIGOrder: strings.Replace(rep.Params.DRAMIGOrder, "stale", "core", 1)}
		if rep.Sharing != nil && len(rep.Sharing.MIGLayouts) > 0 {
			return v.setMIG(rep.Sharing.MIGLayouts), nil
		}
	case sharing == "mig":
		v.Config = &agentConfig{Version: "v1", Flags: &agentFlags{MIGStrategy: "mixed"}}
		if rep.Sharing == nil || len(rep.Sharing.MIGLayouts) == 0 {
			return nil, nil
		}
		return v.setMIG(rep.Sharing.MIGLayouts), nil
	case strings.HasPrefix(sharing, "timeslice:") && !dra:
		n, err := strconv.Atoi(strings.TrimPrefix(sharing, "timeslice:"))
		if err != nil {
			return nil, fmt.Errorf("-o values: sharing %q: %w", sharing, err)
		}
		s := &agentSharing{}
		s.TimeSlicing.Resources = []replicatedResource{{Name: "nvidia.com/gpu", Replicas: n}}
		v.Config = &agentConfig{Version: "v1", Sharing: s}
	case dra:
		return nil, fmt.Errorf("-o values: sharing %s under --gpu-api dra has no setting in the chart", sharing)
	default:
		return nil, fmt.Errorf("-o values: sharing %s has no setting in the chart", sharing)
	}
	return nil, nil
}

// setMIG sets migManager.config to a mig-parted config with one
// configuration per node group of uses (a model, its GPUs per node and
// each GPU's layout; MIG on demand: MIG mode with no instance), and
// returns two lines per group: what it holds and its label, and the
// kubectl command that labels its nodes.
func (v *chartValues) setMIG(uses []engine.MIGLayoutUse) []string {
	cfg := migPartedConfig{Version: "v1", MIGConfigs: map[string][]migPartedGPU{}}
	var lines []string
	for _, u := range uses {
		name := migConfigName(u, cfg.MIGConfigs)
		var gpus []migPartedGPU
		var says []string
		for _, grp := range u.Groups() {
			e := migPartedGPU{Devices: any(grp.GPUs), MIGEnabled: grp.Layout != nil}
			if len(grp.GPUs) == u.GPUsPerNode {
				e.Devices = "all"
			}
			if e.MIGEnabled {
				e.MIGDevices = migDevices{}
				what := "MIG mode, no instance (made per claim)"
				if u.Source != engine.OnDemandSource {
					what = engine.LayoutText(grp.Layout)
					for _, p := range grp.Layout {
						e.MIGDevices[p]++
					}
				}
				says = append(says, engine.GPUList(grp.GPUs)+": "+what)
			}
			gpus = append(gpus, e)
		}
		cfg.MIGConfigs[name] = gpus
		nodes := "nodes"
		if u.Nodes == 1 {
			nodes = "node"
		}
		lines = append(lines, fmt.Sprintf("%d %s %s, %d of %d GPUs with MIG (%s): %s=%s",
			u.Nodes, u.Model, nodes, u.MIGGPUsPerNode, u.GPUsPerNode, strings.Join(says, "; "), migConfigLabel, name),
			fmt.Sprintf("  kubectl label node %s %s=%s --overwrite", nodeList(u.NodeNames), migConfigLabel, name))
	}
	v.MIGManager = &migManagerValues{Config: cfg}
	return lines
}

var (
	numbered = regexp.MustCompile(`^(.*?)(0|[1-9][0-9]*)$`)
	// plainName is a name a shell reads as one word as it is (a
	// Kubernetes node name is one); nodeList quotes any other.
	plainName = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// nodeList writes node names for a shell command line, a name with other
// characters than letters, digits, '.', '_' and '-' in single quotes, and
// runs of three or more plain names that differ only by consecutive
// numbers at their end as bash's brace expansion: a100-0, a100-1, a100-2 and b as
// "a100-{0..2} b" (n-08, n-09, n-10 stay as they are: n-0{8..10} would
// not give n-10).
func nodeList(names []string) string {
	var out []string
	for i := 0; i < len(names); i++ {
		if !plainName.MatchString(names[i]) {
			out = append(out, "'"+strings.ReplaceAll(names[i], "'", `'\''`)+"'")
			continue
		}
		if m := numbered.FindStringSubmatch(names[i]); m != nil {
			first, _ := strconv.Atoi(m[2])
			j := i
			for j+1 < len(names) && names[j+1] == m[1]+strconv.Itoa(first+j+1-i) {
				j++
			}
			if j-i >= 2 {
				out = append(out, fmt.Sprintf("%s{%d..%d}", m[1], first, first+j-i))
				i = j
				continue
			}
		}
		out = append(out, names[i])
	}
	return strings.Join(out, " ")
}

var notLabel = regexp.MustCompile(`[^a-z0-9.-]+`)

// migConfigName names the configuration of node group u: gpuplane-MODEL,
// with a number after it when taken has that name already.
func migConfigName(u engine.MIGLayoutUse, taken map[string][]migPartedGPU) string {
	base := "gpuplane-" + strings.Trim(notLabel.ReplaceAllString(strings.ToLower(u.Model), "-"), "-.")
	name := base
	for k := 2; taken[name] != nil; k++ {
		name = base + "-" + strconv.Itoa(k)
	}
	return name
}
