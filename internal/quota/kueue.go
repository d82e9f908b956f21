// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"fmt"

	"go.yaml.in/yaml/v3"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/api/resource"
)

// The Kueue and Kubernetes objects that Plan writes: small structs of our
// own whose YAML keys mirror the kueue.x-k8s.io/v1beta2 API of Kueue
// v0.17.0 (sigs.k8s.io/kueue apis/kueue/v1beta2; v1beta1 is deprecated
// there) and core/v1 ResourceQuota, so that gpuplane links no Kubernetes
// package. Quantities are whole GPUs.

// APIVersion is the Kueue API version of the objects Plan writes.
const APIVersion = "kueue.x-k8s.io/v1beta2"

// Object is one Kubernetes object.
type Object struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   Metadata `yaml:"metadata"`
	Spec       any      `yaml:"spec"`
}

// Metadata is an object's name, namespace and labels.
type Metadata struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

// CohortSpec is a Cohort's spec; the Cohort only groups ClusterQueues here.
type CohortSpec struct{}

// ResourceFlavorSpec is a ResourceFlavor's spec.
type ResourceFlavorSpec struct {
	NodeLabels map[string]string `yaml:"nodeLabels"`
}

// WorkloadPriorityClass is a WorkloadPriorityClass (it has no spec).
type WorkloadPriorityClass struct {
	APIVersion  string   `yaml:"apiVersion"`
	Kind        string   `yaml:"kind"`
	Metadata    Metadata `yaml:"metadata"`
	Value       int      `yaml:"value"`
	Description string   `yaml:"description"`
}

// ClusterQueueSpec is a ClusterQueue's spec.
type ClusterQueueSpec struct {
	CohortName        string          `yaml:"cohortName"`
	NamespaceSelector LabelSelector   `yaml:"namespaceSelector"`
	ResourceGroups    []ResourceGroup `yaml:"resourceGroups"`
	Preemption        Preemption      `yaml:"preemption"`
}

// LabelSelector is a label selector.
type LabelSelector struct {
	MatchExpressions []Requirement `yaml:"matchExpressions"`
}

// Requirement is one label selector requirement.
type Requirement struct {
	Key      string   `yaml:"key"`
	Operator string   `yaml:"operator"`
	Values   []string `yaml:"values"`
}

// ResourceGroup is a ClusterQueue's resource group.
type ResourceGroup struct {
	CoveredResources []string       `yaml:"coveredResources"`
	Flavors          []FlavorQuotas `yaml:"flavors"`
}

// FlavorQuotas are a ClusterQueue's quotas of one ResourceFlavor.
type FlavorQuotas struct {
	Name      string          `yaml:"name"`
	Resources []ResourceQuota `yaml:"resources"`
}

// ResourceQuota is the quota of one resource of a flavor, in GPUs; a nil
// limit is absent (no cap).
type ResourceQuota struct {
	Name           string `yaml:"name"`
	NominalQuota   int    `yaml:"nominalQuota"`
	BorrowingLimit *int   `yaml:"borrowingLimit,omitempty"`
	LendingLimit   *int   `yaml:"lendingLimit,omitempty"`
}

// Preemption is a ClusterQueue's preemption policy.
type Preemption struct {
	ReclaimWithinCohort string             `yaml:"reclaimWithinCohort"`
	BorrowWithinCohort  BorrowWithinCohort `yaml:"borrowWithinCohort"`
	WithinClusterQueue  string             `yaml:"withinClusterQueue"`
}

// BorrowWithinCohort says whether a workload that must borrow may preempt
// workloads of other ClusterQueues of the cohort.
type BorrowWithinCohort struct {
	Policy string `yaml:"policy"`
}

// LocalQueueSpec is a LocalQueue's spec.
type LocalQueueSpec struct {
	ClusterQueue string `yaml:"clusterQueue"`
}

// NamespaceQuotaSpec is a core/v1 ResourceQuota's spec.
type NamespaceQuotaSpec struct {
	Hard map[string]int `yaml:"hard"`
}

// ConfigAPIVersion is the API version of Kueue's own configuration file
// (sigs.k8s.io/kueue apis/config/v1beta2 of Kueue v0.17.0).
const ConfigAPIVersion = "config.kueue.x-k8s.io/v1beta2"

// ExcludedResources are the resource-name prefixes the Kueue
// Configuration of KueueConfig leaves out of quota: what a GPU pod asks
// for besides nvidia.com/gpu. Kueue refuses a workload that requests a
// resource its ClusterQueue does not cover unless the name starts with
// one of these (Kueue's pkg/cache/scheduler WithExcludedResourcePrefixes,
// pkg/resources), and Plan's ClusterQueues cover the accelerators only
// (nvidia.com/gpu, amd.com/gpu, habana.ai/gaudi).
var ExcludedResources = []string{"cpu", "memory", "ephemeral-storage", "hugepages-"}

// GPU APIs a cluster serves its GPUs through (gpuplane quota --gpu-api,
// as gpuplane simulate --gpu-api names them).
const (
	// DevicePlugin: the kubelet device-plugin API; pods ask nvidia.com/gpu.
	DevicePlugin = "device-plugin"
	// DRA: Dynamic Resource Allocation; pods ask nvidia.com/gpu (the
	// DeviceClass's extendedResourceName) or claim devices of
	// apidra.GPUDeviceClass.
	DRA = "dra"
)

// DRAFeatureGates are the Kueue v0.17.0 feature gates (alpha, off by
// default; sigs.k8s.io/kueue pkg/features) that make Kueue count DRA
// devices: DynamicResourceAllocation counts the devices of a pod's
// ResourceClaimTemplates by DeviceClass through
// resources.deviceClassMappings (pkg/dra claims.go); DRAExtendedResources
// counts an extended resource a DeviceClass serves (nvidia.com/gpu of
// apidra.GPUDeviceClass) under the mapping's name (pkg/dra
// extended_resources.go). Without DynamicResourceAllocation Kueue ignores
// resource claims: their GPUs are admitted outside every quota.
var DRAFeatureGates = []string{"DynamicResourceAllocation", "DRAExtendedResources"}

// KueueConfiguration is the part of Kueue's Configuration (the
// controller_manager_config.yaml of its kueue-manager-config ConfigMap)
// that the objects of Plan need.
type KueueConfiguration struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// FeatureGates is Kueue's featureGates (it cannot be used together
	// with kueue's --feature-gates flag, which Kueue's manifests do not
	// pass).
	FeatureGates map[string]bool `yaml:"featureGates,omitempty"`
	Resources    ConfigResources `yaml:"resources"`
}

// ConfigResources is a Configuration's resources section.
type ConfigResources struct {
	ExcludeResourcePrefixes []string             `yaml:"excludeResourcePrefixes"`
	DeviceClassMappings     []DeviceClassMapping `yaml:"deviceClassMappings,omitempty"`
}

// DeviceClassMapping is one of a Configuration's
// resources.deviceClassMappings: Kueue counts a claim's devices of
// DeviceClassNames as the resource Name of the ClusterQueues
// (sigs.k8s.io/kueue apis/config/v1beta2 DeviceClassMapping).
type DeviceClassMapping struct {
	Name             string   `yaml:"name"`
	DeviceClassNames []string `yaml:"deviceClassNames"`
}

// KueueConfig returns the Kueue Configuration Plan's objects need on a
// device-plugin cluster: resources.excludeResourcePrefixes set to
// ExcludedResources, so that a Job asking for GPUs, cpu and memory is
// admitted by its GPUs alone.
func KueueConfig() KueueConfiguration {
	return KueueConfiguration{APIVersion: ConfigAPIVersion, Kind: "Configuration",
		Resources: ConfigResources{ExcludeResourcePrefixes: append([]string(nil), ExcludedResources...)}}
}

// KueueConfigFor returns the Kueue Configuration for a cluster serving its
// GPUs through api (DevicePlugin or DRA; "" is DevicePlugin). Under DRA it
// is KueueConfig with DRAFeatureGates on and one deviceClassMapping that
// counts each device of apidra.GPUDeviceClass as one nvidia.com/gpu, the
// resource Plan's ClusterQueues cover: a pod claiming 2 GPUs through a
// ResourceClaimTemplate, one asking nvidia.com/gpu: 2 served by DRA and
// one asking it of a device plugin all take 2 of the same quota. An
// unknown api is an error.
func KueueConfigFor(api string) (KueueConfiguration, error) {
	c := KueueConfig()
	switch api {
	case "", DevicePlugin:
		return c, nil
	case DRA:
		c.FeatureGates = map[string]bool{}
		for _, g := range DRAFeatureGates {
			c.FeatureGates[g] = true
		}
		c.Resources.DeviceClassMappings = []DeviceClassMapping{{Name: resource.GPU, DeviceClassNames: []string{apidra.GPUDeviceClass}}}
		return c, nil
	}
	return KueueConfiguration{}, fmt.Errorf("unknown GPU API %q (%s or %s)", api, DevicePlugin, DRA)
}

// Keys returns the Configuration's keys other than apiVersion and kind
// as plain maps and lists (featureGates, resources), in the YAML names
// Kueue reads: what a Kueue already configured otherwise must have set
// (internal/testenv/kube KueueOptions.Config takes them).
func (c KueueConfiguration) Keys() (map[string]any, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return nil, err
	}
	var keys map[string]any
	if err := yaml.Unmarshal(b, &keys); err != nil {
		return nil, err
	}
	delete(keys, "apiVersion")
	delete(keys, "kind")
	return keys, nil
}
