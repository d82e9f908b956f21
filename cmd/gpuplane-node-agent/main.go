// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpuplane-node-agent is the GPU node DaemonSet: kubelet device
// plugin, GPU health, feature labels and metrics for one node
// (internal/node/agent). This file wires the command line only.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/node/agent"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/version"
)

const name = "gpuplane-node-agent"

func main() {
	if err := newNodeAgentCmd().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// newNodeAgentCmd returns the command with its flags bound to its own
// options.
func newNodeAgentCmd() *cobra.Command {
	o := agent.DefaultOptions()
	var prune bool
	cmd := &cobra.Command{
		Use:   name,
		Short: "Kubelet device plugin or DRA kubelet plugin, GPU feature labels, GPU health and metrics for one node",
		Long: `gpuplane-node-agent makes a node's GPUs schedulable: it discovers them
(through NVML, or a mock profile) and serves them to the kubelet, either
through the device-plugin API (nvidia.com/gpu and the MIG resources, the
default) or, with --kubelet-api=dra, as the DRA kubelet plugin of driver
gpu.nvidia.com (ResourceSlices of whole GPUs, MIG placements made on
demand and shares). It reports GPU health, writes GPU feature labels and
serves GPU metrics. It exits cleanly on SIGTERM or SIGINT.`,
		Version:       version.Get().String(name),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if prune {
				return agent.PruneLabels(ctx, o.Kubeconfig)
			}
			return agent.Run(ctx, o)
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	f := cmd.Flags()
	f.StringVar(&o.Backend, "backend", o.Backend, "device backend: nvml or mock")
	f.StringVar(&o.MockProfile, "mock-profile", o.MockProfile, "mock backend: built-in profile name ("+strings.Join(mock.Builtins(), ", ")+") or profile file")
	f.StringVar(&o.MockFaultsFile, "mock-faults-file", o.MockFaultsFile, "mock backend: YAML file of current GPU faults, watched for changes")
	f.StringVar(&o.MockMIGStateFile, "mock-mig-state", o.MockMIGStateFile, "mock backend: JSON file keeping the MIG devices created through DRA past a restart, as a GPU keeps them (empty: in memory)")
	f.StringVar(&o.DevicePluginDir, "device-plugin-dir", o.DevicePluginDir, "kubelet device-plugin directory (holds kubelet.sock)")
	f.StringVar(&o.ConfigFile, "config", o.ConfigFile, "configuration file (YAML, version: v1; see docs/node-agent.md)")
	f.StringVar(&o.NodeConfig.Dir, "config-dir", o.NodeConfig.Dir, "directory of configurations, one file per name (a mounted ConfigMap, one key per configuration, as NVIDIA's config-manager reads it); the node label nvidia.com/device-plugin.config names the node's, and the agent exits to start again when it comes to name another (instead of --config)")
	f.StringVar(&o.NodeConfig.Default, "default-config", o.NodeConfig.Default, "with --config-dir: the configuration of a node without the label (empty: --fallback-strategies decide)")
	f.StringSliceVar(&o.NodeConfig.FallbackStrategies, "fallback-strategies", o.NodeConfig.FallbackStrategies, "with --config-dir: tried in order on a node without the label and without --default-config: named (the configuration named default), single (the one configuration, if only one), empty (the built-in defaults)")
	f.StringVar(&o.NodeName, "node-name", o.NodeName, "name of this node (default $NODE_NAME)")
	f.StringVar(&o.LabelsFile, "labels-file", o.LabelsFile, "write GPU feature labels to this node-feature-discovery features file (e.g. /etc/kubernetes/node-feature-discovery/features.d/gpuplane)")
	f.BoolVar(&o.LabelNode, "label-node", o.LabelNode, "put GPU feature labels and the GPU UUIDs annotation on the Node object --node-name (in-cluster credentials unless --kubeconfig)")
	f.BoolVar(&o.NodeFeatureAPI, "node-feature-api", o.NodeFeatureAPI, "write GPU feature labels as a node-feature-discovery NodeFeature object in --namespace, which NFD puts on the node (in-cluster credentials unless --kubeconfig)")
	f.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace of the NodeFeature object (default $POD_NAMESPACE)")
	f.BoolVar(&o.SchedulerChoice, "scheduler-choice", o.SchedulerChoice, "in Allocate, give pods bound to --node-name the GPUs gpuplane-scheduler chose for them and mark them allocated (lists and patches pods; in-cluster credentials unless --kubeconfig)")
	f.BoolVar(&prune, "prune-labels", false, "remove the GPU feature labels the agent writes under --label-node, all but nvidia.com/gpu.present, from every Node, then exit (the chart's uninstall hook; needs get, list and patch on nodes; other flags but --kubeconfig are ignored)")
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file for the API server, outside a cluster or in tests (default: in-cluster credentials with --label-node, --node-feature-api, --scheduler-choice or --kubelet-api=dra)")
	f.StringVar(&o.KubeletAPI, "kubelet-api", o.KubeletAPI, "kubelet API the GPUs are served through: device-plugin, or dra (DRA driver gpu.nvidia.com, as NVIDIA's DRA driver; needs API access and --node-name; see docs/dra.md)")
	f.StringVar(&o.DRA.PluginDir, "dra-plugin-dir", o.DRA.PluginDir, "with --kubelet-api=dra: directory of the plugin's socket (dra.sock) and checkpoint")
	f.StringVar(&o.DRA.RegistrarDir, "dra-registrar-dir", o.DRA.RegistrarDir, "with --kubelet-api=dra: the kubelet's plugin registration directory")
	f.StringVar(&o.DRA.CDIDir, "cdi-dir", o.DRA.CDIDir, "write CDI specs here (e.g. /var/run/cdi), with the NVIDIA driver's libraries, binaries and hooks found under --driver-root: with --kubelet-api=dra, of each prepared device; on the device plugin under the cdi-cri or cdi-annotations strategy, of every device at start; empty: rely on NVIDIA's container toolkit's specs for the devices (a share's or an MPS claim's own spec still goes to /var/run/cdi)")
	f.StringVar(&o.DriverRoot, "driver-root", o.DriverRoot, "the NVIDIA driver's root on the host, where --cdi-dir's specs find its files (NVIDIA's --nvidia-driver-root, e.g. /run/nvidia/driver); empty: / with --backend=nvml, none with --backend=mock")
	f.StringVar(&o.ContainerDriverRoot, "container-driver-root", o.ContainerDriverRoot, "where the agent sees --driver-root when it runs in a container that mounts it elsewhere (NVIDIA's --container-driver-root, e.g. /driver-root); the specs name the host's paths; empty: --driver-root itself")
	f.StringVar(&o.CDIHookPath, "nvidia-cdi-hook-path", o.CDIHookPath, "nvidia-cdi-hook's path on the host, which the runtime runs for the specs' hooks (NVIDIA's container toolkit installs it)")
	f.StringVar(&o.DRA.ToolkitSpec, "cdi-toolkit-spec", o.DRA.ToolkitSpec, "with --cdi-dir: NVIDIA's container toolkit's CDI spec of the node's GPUs (e.g. /var/run/cdi/nvidia.yaml); the devices it names by UUID get no spec of the agent's, those it names by index get the agent's with their edits, the others (MIG devices made on demand) get its libraries and hooks")
	f.DurationVar(&o.DRA.RediscoverInterval, "dra-rediscover-interval", o.DRA.RediscoverInterval, "with --kubelet-api=dra: how often to discover the GPUs again and publish a change (a MIG mode switched, a MIG device made outside DRA); 0: never")
	f.StringVar(&o.DRA.BootIDFile, "dra-boot-id-file", o.DRA.BootIDFile, "with --kubelet-api=dra: the node's boot ID file, to which the checkpoint is keyed: claims prepared under another boot ID are prepared again (empty: /proc/sys/kernel/random/boot_id)")
	f.BoolVar(&o.DRA.Shares, "dra-shares", o.DRA.Shares, "with --kubelet-api=dra: publish GPUs without MIG as shareable by memory and milli-GPU (allowMultipleAllocations)")
	f.StringVar(&o.DRA.ConsumableShares, "dra-consumable-shares", o.DRA.ConsumableShares, "with --kubelet-api=dra: publish GPUs without MIG as shareable in one of NVIDIA's DRA driver's --consumable-shares modes: memory (as --dra-shares), unlimited (a claim that asks nothing holds 1 milli-GPU), or an integer N of 1..1000 (a \"shares\" capacity of N, a claim takes 1 by default); implies --dra-shares")
	f.StringVar(&o.DRA.MIGOrder, "dra-mig-order", o.DRA.MIGOrder, "with --kubelet-api=dra: the order of the MIG devices published, which upstream's allocator takes the first free of: core (each profile's free placements as gpuplane's placement core ranks them against --dra-target-workload-file, republished after each prepare and unprepare) or table (the MIG table's: GPU, profile, start); empty: core; as gpuplane simulate's --dra-mig-order")
	f.StringVar(&o.DRA.TargetWorkloadFile, "dra-target-workload-file", o.DRA.TargetWorkloadFile, "with --dra-mig-order=core: the openb pod list (CSV) the MIG placements are ranked against, as gpuplane-scheduler's targetWorkloadFile (empty: the built-in workload)")
	m := &o.Metrics
	f.StringVar(&m.Addr, "metrics-addr", m.Addr, "address to serve GPU metrics on, at /metrics (empty: no metrics)")
	f.StringVar(&m.File, "metrics-file", m.File, "metrics file selecting the DCGM fields served, in dcgm-exporter's counters format (default: all)")
	f.DurationVar(&m.SampleInterval, "metrics-sample-interval", m.SampleInterval, "time between two samples of the GPUs")
	f.DurationVar(&m.StaleAfter, "metrics-stale-after", m.StaleAfter, "age past which a GPU's last sample is no longer served (default 3 sample intervals)")
	f.StringVar(&m.PodResourcesSocket, "pod-resources-socket", m.PodResourcesSocket, "kubelet pod-resources socket, for pod labels and, with --scheduler-choice, to tell which pod an Allocate is for (empty: neither)")
	f.DurationVar(&m.PodResourcesInterval, "pod-resources-interval", m.PodResourcesInterval, "time between two reads of the pod-resources socket; also each read's deadline")
	f.BoolVar(&m.VirtualGPUs, "kubernetes-virtual-gpus", m.VirtualGPUs, "serve a GPU shared by time-slicing once per replica held, labelled vgpu, as dcgm-exporter's flag of that name (default: once per GPU)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlagSet(klogFlags)
	return cmd
}
