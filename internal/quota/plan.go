// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Capacity returns the GPUs of each model in a node list, by the catalog's
// spelling of a catalogued model (gpu.Canonical: "mi300x" is MI300X), as
// the teams file's models are read; nodes without GPUs are skipped.
func Capacity(nodes []trace.NodeSpec) map[string]int {
	c := map[string]int{}
	for _, n := range nodes {
		if n.GPUs > 0 {
			c[gpu.Canonical(n.Model)] += n.GPUs
		}
	}
	return c
}

// LoadTeamsOn reads a teams file (LoadTeams) and checks it against the
// GPUs of nodes (CheckCapacity): gpuplane quota and gpuplane simulate
// --teams both read their teams file with it, so a file one refuses the
// other refuses too, with the same message.
func LoadTeamsOn(path string, nodes []trace.NodeSpec) (*Teams, error) {
	t, err := LoadTeams(path)
	if err != nil {
		return nil, err
	}
	if err := CheckCapacity(path, t, Capacity(nodes)); err != nil {
		return nil, err
	}
	return t, nil
}

// CheckCapacity refuses a plan whose nominal quotas of a model sum to more
// GPUs than capacity has of that model, saying by how much; the first
// model in name order is reported. file names the teams file in errors.
func CheckCapacity(file string, t *Teams, capacity map[string]int) error {
	sum, line := map[string]int{}, map[string]int{}
	var parts = map[string][]string{}
	for _, tm := range t.Teams {
		for _, q := range tm.Quotas {
			sum[q.Model] += *q.Nominal
			parts[q.Model] = append(parts[q.Model], fmt.Sprintf("%s %d", tm.Name, *q.Nominal))
			if _, ok := line[q.Model]; !ok {
				line[q.Model] = q.Line()
			}
		}
	}
	for _, m := range sortedKeys(sum) {
		if over := sum[m] - capacity[m]; over > 0 {
			return fmt.Errorf("%s:%d: model %s: nominal quotas sum to %s (%s) but the nodes have %d: over by %s",
				file, line[m], m, gpuCount(sum[m]), strings.Join(parts[m], ", "), capacity[m], gpuCount(over))
		}
	}
	return nil
}

// Plan returns the Kueue objects of a teams file on a cluster whose GPUs
// per model are capacity, after CheckCapacity: a Cohort; one
// ResourceFlavor per model, selecting nodes by its vendor's product label
// (productLabel: resource.LabelGPUProduct for NVIDIA's models, AMD's
// amd.com/gpu.product-name, gpuplane.io/gpu.model for Gaudi); one
// WorkloadPriorityClass and one ClusterQueue per team (a resource group
// covering resource.GPU, and amd.com/gpu and habana.ai/gaudi where the
// team has those vendors' models, one flavor per model of the team's
// quotas, preemption
// reclaimWithinCohort Any, borrowWithinCohort LowerPriority and
// withinClusterQueue LowerPriority as
// https://kueue.sigs.k8s.io/docs/concepts/preemption/ describes, the rules
// internal/sim/kueue applies in simulate --teams); a
// LocalQueue named after the team in each of its namespaces; and a core/v1
// ResourceQuota per namespace capping requests.nvidia.com/gpu (and each
// other vendor's resource the plan names) at the most GPUs of that
// vendor Kueue can admit to the team (see HardCap). file names the teams
// file in errors. The objects are those of a device-plugin cluster; see
// PlanFor.
func Plan(file string, t *Teams, capacity map[string]int) ([]any, error) {
	return PlanFor(file, t, capacity, DevicePlugin)
}

// DRADevicesQuota is the core/v1 ResourceQuota resource that counts the
// devices of apidra.GPUDeviceClass a namespace's ResourceClaims ask
// (<class>.deviceclass.resource.k8s.io/devices; kubernetes v1.37.2
// pkg/quota/v1/evaluator/core/resource_claims.go).
const DRADevicesQuota = apidra.GPUDeviceClass + ".deviceclass.resource.k8s.io/devices"

// PlanFor is Plan for a cluster serving its GPUs through api (DevicePlugin
// or DRA). The Kueue objects are the same for both: under DRA, Kueue's
// Configuration (KueueConfigFor) maps apidra.GPUDeviceClass to nvidia.com/gpu,
// the resource the ClusterQueues cover. Under DRA each namespace's
// ResourceQuota also caps the GPUs its ResourceClaims ask
// (DRADevicesQuota) at the team's HardCap. An unknown api is an error.
func PlanFor(file string, t *Teams, capacity map[string]int, api string) ([]any, error) {
	if _, err := KueueConfigFor(api); err != nil {
		return nil, err
	}
	if err := CheckCapacity(file, t, capacity); err != nil {
		return nil, err
	}
	flavor, models, err := planFlavors(file, t)
	if err != nil {
		return nil, err
	}
	objs := []any{Object{APIVersion: APIVersion, Kind: "Cohort", Metadata: Metadata{Name: t.Cohort}, Spec: CohortSpec{}}}
	objs = append(objs, resourceFlavors(t, flavor, models)...)
	for _, tm := range t.Teams {
		objs = append(objs, WorkloadPriorityClass{APIVersion: APIVersion, Kind: "WorkloadPriorityClass",
			Metadata: Metadata{Name: tm.Name}, Value: tm.Priority,
			Description: fmt.Sprintf("priority of team %s (gpuplane quota)", tm.Name)})
	}
	for _, tm := range t.Teams {
		objs = append(objs, clusterQueue(t, tm, flavor))
	}
	for _, tm := range t.Teams {
		for _, ns := range tm.Namespaces {
			objs = append(objs, Object{APIVersion: APIVersion, Kind: "LocalQueue",
				Metadata: Metadata{Name: tm.Name, Namespace: ns}, Spec: LocalQueueSpec{ClusterQueue: tm.Name}})
		}
	}
	for _, tm := range t.Teams {
		hard := HardCap(t, tm.Name)
		for _, ns := range tm.Namespaces {
			caps := map[string]int{"requests." + resource.GPU: hardCap(t, tm.Name, gpu.NVIDIA)}
			for _, v := range planVendors(models) {
				caps["requests."+vendorResource[v]] = hardCap(t, tm.Name, v)
			}
			if api == DRA {
				caps[DRADevicesQuota] = hard
			}
			objs = append(objs, Object{APIVersion: "v1", Kind: "ResourceQuota",
				Metadata: Metadata{Name: "gpuplane-gpu", Namespace: ns},
				Spec:     NamespaceQuotaSpec{Hard: caps}})
		}
	}
	return objs, nil
}

// planFlavors returns the ResourceFlavor of each model the quotas name,
// and the models sorted; a model without a product label, or whose name
// makes no flavor name or the same as another's, is an error.
func planFlavors(file string, t *Teams) (map[string]string, []string, error) {
	flavor := map[string]string{} // model -> flavor name
	byFlavor := map[string]string{}
	var models []string
	for _, tm := range t.Teams {
		for _, q := range tm.Quotas {
			if _, ok := flavor[q.Model]; ok {
				continue
			}
			if q.Product == "" && gpu.VendorOf(q.Model) != gpu.Intel {
				return nil, nil, fmt.Errorf("%s:%d: product: model %s has no %s value; give product: in one of its quotas", file, q.line, q.Model, productLabel[gpu.VendorOf(q.Model)])
			}
			name := FlavorName(q.Model)
			if name == "" {
				return nil, nil, fmt.Errorf("%s:%d: model: %q makes no ResourceFlavor name", file, q.line, q.Model)
			}
			if other, ok := byFlavor[name]; ok {
				return nil, nil, fmt.Errorf("%s:%d: model: models %s and %s both make ResourceFlavor %q", file, q.line, other, q.Model, name)
			}
			flavor[q.Model], byFlavor[name] = name, q.Model
			models = append(models, q.Model)
		}
	}
	sort.Strings(models)
	return flavor, models, nil
}

// resourceFlavors returns a ResourceFlavor per model (flavor names them),
// selecting the nodes of the model's product label.
func resourceFlavors(t *Teams, flavor map[string]string, models []string) []any {
	var objs []any
	for _, m := range models {
		var product string
		for _, tm := range t.Teams {
			for _, q := range tm.Quotas {
				if q.Model == m {
					product = q.Product
				}
			}
		}
		v := gpu.VendorOf(m)
		if product == "" {
			product = m // Intel: gpuplane's model label holds the model
		}
		objs = append(objs, Object{APIVersion: APIVersion, Kind: "ResourceFlavor",
			Metadata: Metadata{Name: flavor[m], Labels: map[string]string{"gpuplane.io/model": m}},
			Spec:     ResourceFlavorSpec{NodeLabels: map[string]string{productLabel[v]: product}}})
	}
	return objs
}

// clusterQueue returns team tm's ClusterQueue: its quotas by flavor, in
// the cohort, with Kueue's preemption as gpuplane plans it.
func clusterQueue(t *Teams, tm Team, flavor map[string]string) Object {
	// One resource group per vendor's resource (Kueue: a resource is in
	// one group, and each flavor of a group covers all its resources):
	// nvidia.com/gpu first, as every plan had it, then amd.com/gpu and
	// habana.ai/gaudi, each where the team has quotas of that vendor's
	// models.
	groups := []ResourceGroup{{CoveredResources: []string{resource.GPU}}}
	at := map[gpu.Vendor]int{gpu.NVIDIA: 0}
	for _, q := range tm.Quotas {
		v := gpu.VendorOf(q.Model)
		i, ok := at[v]
		if !ok {
			i, at[v] = len(groups), len(groups)
			groups = append(groups, ResourceGroup{CoveredResources: []string{vendorResource[v]}})
		}
		groups[i].Flavors = append(groups[i].Flavors, FlavorQuotas{Name: flavor[q.Model], Resources: []ResourceQuota{{
			Name: vendorResource[v], NominalQuota: *q.Nominal, BorrowingLimit: q.BorrowingLimit, LendingLimit: q.LendingLimit}}})
	}
	// A group needs a flavor (Kueue's CRD: flavors minItems 1): a team
	// without NVIDIA quotas has no nvidia.com/gpu group, and Kueue admits
	// none of it, as its ResourceQuota caps it at 0 (hardCap).
	groups = slices.DeleteFunc(groups, func(g ResourceGroup) bool { return len(g.Flavors) == 0 })
	return Object{APIVersion: APIVersion, Kind: "ClusterQueue", Metadata: Metadata{Name: tm.Name},
		Spec: ClusterQueueSpec{
			CohortName: t.Cohort,
			NamespaceSelector: LabelSelector{MatchExpressions: []Requirement{{
				Key: "kubernetes.io/metadata.name", Operator: "In", Values: tm.Namespaces}}},
			ResourceGroups: groups,
			Preemption:     Preemption{ReclaimWithinCohort: "Any", BorrowWithinCohort: BorrowWithinCohort{Policy: "LowerPriority"}, WithinClusterQueue: "LowerPriority"},
		}}
}

// HardCap returns the most GPUs, all models together, that Kueue can admit
// to the named team: per model, nominal plus what it may borrow, which is
// the smaller of its borrowingLimit (none: no cap) and what the other teams
// may lend (their lendingLimit, or their whole nominal without one). This is
// the part of a team's quota that a ResourceQuota can express: it knows
// neither GPU models nor a cap shared by several namespaces, so each of the
// team's namespaces gets the whole cap.
func HardCap(t *Teams, team string) int {
	return hardCap(t, team, anyVendor)
}

// anyVendor makes hardCap count every vendor's models.
const anyVendor = gpu.Vendor(255)

// hardCap is HardCap over the models of vendor v (gpu.VendorOf), or of
// every vendor (anyVendor): a ResourceQuota caps each vendor's resource.
func hardCap(t *Teams, team string, v gpu.Vendor) int {
	lendable := map[string]int{}
	for _, tm := range t.Teams {
		if tm.Name == team {
			continue
		}
		for _, q := range tm.Quotas {
			if q.LendingLimit != nil {
				lendable[q.Model] += *q.LendingLimit
			} else {
				lendable[q.Model] += *q.Nominal
			}
		}
	}
	total := 0
	for _, tm := range t.Teams {
		if tm.Name != team {
			continue
		}
		for _, q := range tm.Quotas {
			if v != anyVendor && gpu.VendorOf(q.Model) != v {
				continue
			}
			borrow := lendable[q.Model]
			if q.BorrowingLimit != nil && *q.BorrowingLimit < borrow {
				borrow = *q.BorrowingLimit
			}
			total += *q.Nominal + borrow
		}
	}
	return total
}

// vendorResource is the extended resource each vendor's device plugin
// advertises, which a ClusterQueue covers and a ResourceQuota caps:
// nvidia.com/gpu, amd.com/gpu (ROCm/k8s-device-plugin), habana.ai/gaudi
// (HabanaAI's Gaudi device plugin).
var vendorResource = map[gpu.Vendor]string{gpu.NVIDIA: resource.GPU, gpu.AMD: resource.AMDGPU, gpu.Intel: resource.Gaudi}

// productLabel is the node label a model's ResourceFlavor selects its
// nodes by: gpu-feature-discovery's nvidia.com/gpu.product, AMD's node
// labeller's amd.com/gpu.product-name (AMD_Instinct_MI300X), and for
// Intel Gaudi, whose device plugin labels none, gpuplane's
// gpuplane.io/gpu.model (the catalog model, the quota's product by
// default).
var productLabel = map[gpu.Vendor]string{gpu.NVIDIA: resource.LabelGPUProduct, gpu.AMD: resource.LabelAMDProductName, gpu.Intel: resource.LabelGPUModel}

// planVendors returns the vendors other than NVIDIA of models, AMD then
// Intel.
func planVendors(models []string) []gpu.Vendor {
	var out []gpu.Vendor
	for _, v := range []gpu.Vendor{gpu.AMD, gpu.Intel} {
		for _, m := range models {
			if gpu.VendorOf(m) == v {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// FlavorName is the ResourceFlavor name of a GPU model: lowercase, with
// any character other than a-z, 0-9, '-' and '.' replaced by '-'.
func FlavorName(model string) string {
	b := []byte(strings.ToLower(model))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-.")
}

// WriteYAML writes objects as a multi-document YAML stream.
func WriteYAML(w io.Writer, objs []any) error {
	var buf bytes.Buffer
	for _, o := range objs {
		buf.WriteString("---\n")
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(o); err != nil {
			return err
		}
		if err := enc.Close(); err != nil {
			return err
		}
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// gpuCount writes n GPUs: "1 GPU", "5 GPUs".
func gpuCount(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
