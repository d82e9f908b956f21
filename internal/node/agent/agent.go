// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package agent is the GPU node agent, the DaemonSet process that
// cmd/gpuplane-node-agent runs: it discovers the node's GPUs through a
// device backend (nvml, or mock for tests), serves the kubelet device-plugin
// API (internal/node/deviceplugin), writes GPU feature labels (internal/node/labels)
// and serves GPU metrics (internal/node/exporter), all under one configuration
// (api/config/v1) and one health policy (internal/node/health).
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/device/nvml"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/node/drametrics"
	"github.com/gpuplane/gpuplane/internal/node/exporter"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
	"github.com/gpuplane/gpuplane/internal/node/health"
	"github.com/gpuplane/gpuplane/internal/node/labels"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
	"github.com/gpuplane/gpuplane/internal/placement"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// Options are the node agent's settings, one per command-line flag (named
// in errors).
type Options struct {
	// Backend is the device backend: nvml or mock (--backend).
	Backend string
	// MockProfile is the mock backend's built-in profile name or profile
	// file (--mock-profile).
	MockProfile string
	// MockFaultsFile is the mock backend's watched faults file
	// (--mock-faults-file); empty: no faults.
	MockFaultsFile string
	// MockMIGStateFile keeps the mock's MIG devices past a restart, as a
	// GPU keeps them (--mock-mig-state); empty: in memory only.
	MockMIGStateFile string
	// DevicePluginDir is the kubelet's device-plugin directory, holding
	// kubelet.sock (--device-plugin-dir).
	DevicePluginDir string
	// ConfigFile is the configuration file, api/config/v1 (--config);
	// empty: configv1.DefaultConfig().
	ConfigFile string
	// NodeConfig selects the configuration per node instead, by its label
	// nvidia.com/device-plugin.config (--config-dir).
	NodeConfig NodeConfigOptions
	// NodeName is this node's name (--node-name).
	NodeName string
	// LabelsFile is the node-feature-discovery features file the labels
	// are written to (--labels-file); empty: none.
	LabelsFile string
	// LabelNode puts the labels on the Node object NodeName
	// (--label-node), with in-cluster credentials unless Kubeconfig is
	// given.
	LabelNode bool
	// NodeFeatureAPI writes the labels as a node-feature-discovery
	// NodeFeature object in Namespace (--node-feature-api), which NFD puts
	// on the node: no right to patch Nodes is needed. In-cluster
	// credentials unless Kubeconfig is given.
	NodeFeatureAPI bool
	// Namespace holds the NodeFeature object (--namespace; default
	// $POD_NAMESPACE).
	Namespace string
	// SchedulerChoice makes Allocate follow gpuplane-scheduler's choice
	// written on the pods bound to NodeName (--scheduler-choice;
	// deviceplugin.Assignments): it lists those pods and marks the one it
	// serves, which needs list and patch on pods. Off, the agent reads no
	// pod, so an agent that only labels its Node needs no right on pods.
	// In-cluster credentials unless Kubeconfig is given.
	SchedulerChoice bool
	// Kubeconfig is a kubeconfig file for the API server (--kubeconfig),
	// for an agent outside the cluster or in a test; empty: in-cluster
	// credentials, used only with LabelNode, NodeFeatureAPI or
	// SchedulerChoice.
	Kubeconfig string
	// DisableHealthChecks and EnableHealthChecks are NVIDIA's
	// DP_DISABLE_HEALTHCHECKS and DP_ENABLE_HEALTHCHECKS (from the
	// environment), applied to gpuplane.ignoredXIDs by health.IgnoredXIDs.
	DisableHealthChecks, EnableHealthChecks string
	// Metrics are the metrics endpoint's settings.
	Metrics MetricsOptions
	// KubeletAPI is how the GPUs are served to the kubelet
	// (--kubelet-api): KubeletAPIDevicePlugin (also when empty) or
	// KubeletAPIDRA.
	KubeletAPI string
	// DRA are the DRA plugin's settings, with KubeletAPIDRA.
	DRA DRAOptions
	// DriverRoot is the NVIDIA driver's root on the host (--driver-root,
	// NVIDIA's --nvidia-driver-root): with DRA.CDIDir and no
	// DRA.ToolkitSpec, the CDI specs get the driver's files found under
	// it (gpucdi.DriverEdits). Empty: / on the nvml backend, none on the
	// mock backend (its specs have device nodes alone).
	DriverRoot string
	// ContainerDriverRoot is where the agent sees DriverRoot, when it
	// runs in a container that mounts it elsewhere
	// (--container-driver-root, NVIDIA's; e.g. /driver-root); empty:
	// DriverRoot itself.
	ContainerDriverRoot string
	// CDIHookPath is nvidia-cdi-hook's path on the host, run by the
	// runtime for the specs' hooks (--nvidia-cdi-hook-path).
	CDIHookPath string
}

// The kubelet APIs of Options.KubeletAPI.
const (
	// KubeletAPIDevicePlugin serves the GPUs as a kubelet device plugin
	// (internal/node/deviceplugin).
	KubeletAPIDevicePlugin = "device-plugin"
	// KubeletAPIDRA serves them as DRA driver gpu.nvidia.com
	// (internal/node/dra), with API access (in-cluster credentials
	// unless Kubeconfig is given) and a node name.
	KubeletAPIDRA = "dra"
)

// DRAOptions are the settings of the DRA kubelet plugin.
type DRAOptions struct {
	// PluginDir holds the plugin's socket and checkpoint
	// (--dra-plugin-dir).
	PluginDir string
	// RegistrarDir is the kubelet's plugin registration directory
	// (--dra-registrar-dir).
	RegistrarDir string
	// CDIDir is where CDI specs are written (--cdi-dir): of each
	// prepared device with DRA; of every device at start on the device
	// plugin under the cdi-cri or cdi-annotations strategy. Empty: none,
	// NVIDIA's container toolkit's specs are used.
	CDIDir string
	// ToolkitSpec is NVIDIA's container toolkit's CDI spec of the node's
	// GPUs (--cdi-toolkit-spec, e.g. /var/run/cdi/nvidia.yaml): with
	// CDIDir, the devices it names get no spec of the plugin's, the
	// others its libraries and hooks (dra.Config.ToolkitSpec).
	ToolkitSpec string
	// RediscoverInterval is how often the GPUs are discovered again and a
	// change (MIG mode, a MIG device made outside DRA) published
	// (--dra-rediscover-interval; 0: never).
	RediscoverInterval time.Duration
	// Shares publishes GPUs without MIG as shareable by memory and
	// milli-GPU (--dra-shares).
	Shares bool
	// ConsumableShares is how shared GPUs are published, one of NVIDIA's
	// driver's --consumable-shares modes: memory, unlimited or an integer
	// count of shares (--dra-consumable-shares; dra.ParseShareMode); set,
	// it implies Shares. Empty: memory.
	ConsumableShares string
	// BootIDFile is the node's boot ID file (--dra-boot-id-file; empty:
	// dra.DefaultBootIDPath), to which the checkpoint is keyed.
	BootIDFile string
	// MIGOrder is the order the MIG devices are published in
	// (--dra-mig-order, placement.ParseDRAOrder's names, as gpuplane
	// simulate's): core (the default; empty too) ranks each profile's
	// free placements as the placement core would choose them against
	// the target workload (dra.Config.Rank), so that upstream's
	// allocator, which takes the first free device, takes the core's
	// choice; table, the MIG table's order (GPU, profile, start).
	MIGOrder string
	// TargetWorkloadFile is the openb pod list the MIG devices are
	// ranked against under MIGOrder core (--dra-target-workload-file), as
	// gpuplane-scheduler's targetWorkloadFile; empty: the built-in
	// workload (trace.ReadTargetPods).
	TargetWorkloadFile string
}

// MetricsOptions are the settings of the metrics endpoint.
type MetricsOptions struct {
	// Addr is the address /metrics is served on (--metrics-addr); empty:
	// no metrics.
	Addr string
	// File selects the DCGM fields served, in dcgm-exporter's counters
	// format (--metrics-file); empty: all.
	File string
	// SampleInterval is the time between two samples of the GPUs
	// (--metrics-sample-interval).
	SampleInterval time.Duration
	// StaleAfter is the age past which a GPU's last sample is no longer
	// served (--metrics-stale-after); 0: exporter.DefaultStaleSamples
	// sample intervals.
	StaleAfter time.Duration
	// PodResourcesSocket is the kubelet's pod-resources socket, for pod
	// labels (--pod-resources-socket); empty: no pod labels.
	PodResourcesSocket string
	// PodResourcesInterval is the time between two reads of the
	// pod-resources socket, and each read's deadline
	// (--pod-resources-interval).
	PodResourcesInterval time.Duration
	// VirtualGPUs serves a time-sliced device once per replica held,
	// labelled vgpu (--kubernetes-virtual-gpus); see exporter.Options.
	VirtualGPUs bool
}

// DefaultOptions returns the defaults of the flags: the nvml backend, the
// kubelet's paths, the node name from $NODE_NAME, metrics on :9400 (the
// port of dcgm-exporter).
func DefaultOptions() Options {
	return Options{
		Backend:             "nvml",
		MockProfile:         "dgx-h100",
		DevicePluginDir:     "/var/lib/kubelet/device-plugins",
		NodeConfig:          NodeConfigOptions{FallbackStrategies: slices.Clone(configv1.DefaultFallbackStrategies)},
		NodeName:            os.Getenv("NODE_NAME"),
		KubeletAPI:          KubeletAPIDevicePlugin,
		DRA:                 DRAOptions{PluginDir: dra.DefaultPluginDir, RegistrarDir: dra.DefaultRegistrarDir, RediscoverInterval: time.Minute},
		CDIHookPath:         gpucdi.DefaultHookPath,
		DisableHealthChecks: os.Getenv(health.EnvDisableHealthChecks),
		EnableHealthChecks:  os.Getenv(health.EnvEnableHealthChecks),
		Metrics: MetricsOptions{
			Addr:                 ":9400",
			SampleInterval:       exporter.DefaultSampleInterval,
			PodResourcesSocket:   podresources.DefaultSocket,
			PodResourcesInterval: 5 * time.Second,
		},
	}
}

// Check checks the options that need no file or device; errors name the
// flag.
func (o Options) Check() error {
	if o.Backend != "nvml" && o.Backend != "mock" {
		return fmt.Errorf("--backend %q: want nvml or mock", o.Backend)
	}
	if o.KubeletAPI != "" && o.KubeletAPI != KubeletAPIDevicePlugin && o.KubeletAPI != KubeletAPIDRA {
		return fmt.Errorf("--kubelet-api %q: want %s or %s", o.KubeletAPI, KubeletAPIDevicePlugin, KubeletAPIDRA)
	}
	if err := o.NodeConfig.check(o.ConfigFile, o.NodeName); err != nil {
		return err
	}
	if o.KubeletAPI == KubeletAPIDRA && o.NodeName == "" {
		return fmt.Errorf("--kubelet-api=dra needs --node-name (or $NODE_NAME)")
	}
	if err := o.DRA.check(o.KubeletAPI == KubeletAPIDRA); err != nil {
		return err
	}
	if o.LabelNode && o.NodeName == "" {
		return fmt.Errorf("--label-node needs --node-name (or $NODE_NAME)")
	}
	if o.NodeFeatureAPI && (o.NodeName == "" || o.Namespace == "") {
		return fmt.Errorf("--node-feature-api needs --node-name (or $NODE_NAME) and --namespace (or $POD_NAMESPACE)")
	}
	if o.SchedulerChoice && o.NodeName == "" {
		return fmt.Errorf("--scheduler-choice needs --node-name (or $NODE_NAME)")
	}
	if o.Kubeconfig != "" && o.NodeName == "" {
		return fmt.Errorf("--kubeconfig needs --node-name (or $NODE_NAME)")
	}
	m := o.Metrics
	if m.Addr != "" && (m.SampleInterval <= 0 || m.StaleAfter < 0 || m.PodResourcesInterval <= 0) {
		return fmt.Errorf("--metrics-sample-interval and --pod-resources-interval must be positive, --metrics-stale-after not negative")
	}
	return nil
}

// check checks the DRA options: those that only the DRA plugin reads are
// refused without it (dra false), rather than ignored.
func (o DRAOptions) check(dra bool) error {
	switch {
	case !dra && (o.ToolkitSpec != "" || o.Shares || o.ConsumableShares != ""):
		return fmt.Errorf("--cdi-toolkit-spec, --dra-shares and --dra-consumable-shares need --kubelet-api=dra")
	case o.ToolkitSpec != "" && o.CDIDir == "":
		return fmt.Errorf("--cdi-toolkit-spec needs --cdi-dir")
	case o.RediscoverInterval < 0:
		return fmt.Errorf("--dra-rediscover-interval %v: must not be negative (0: never)", o.RediscoverInterval)
	case !dra && (o.MIGOrder != "" || o.TargetWorkloadFile != ""):
		return fmt.Errorf("--dra-mig-order and --dra-target-workload-file need --kubelet-api=dra")
	}
	order, err := o.migOrder()
	if err != nil {
		return err
	}
	if order == placement.TableOrder && o.TargetWorkloadFile != "" {
		return fmt.Errorf("--dra-target-workload-file needs --dra-mig-order=core")
	}
	if dra && o.TargetWorkloadFile != "" {
		if _, err := o.rank(); err != nil { // read now, before any GPU or API server
			return err
		}
	}
	_, err = o.shareMode()
	return err
}

// migOrder is the order --dra-mig-order names (core when empty).
func (o DRAOptions) migOrder() (placement.DRAOrder, error) {
	if o.MIGOrder == "" {
		return placement.CoreOrder, nil
	}
	order, err := placement.ParseDRAOrder(o.MIGOrder)
	switch {
	case err == nil && order == placement.StaleOrder:
		return order, errors.New(`--dra-mig-order: "stale" is a measure of gpuplane simulate, not a driver's order (table or core)`)
	case err != nil:
		return order, fmt.Errorf("--dra-mig-order: unknown order %q (table or core)", o.MIGOrder)
	}
	return order, nil
}

// rank is the target workload the DRA plugin ranks its MIG devices
// against (dra.Config.Rank): TargetWorkloadFile's pods, or the built-in
// workload, their most popular shapes covering
// placement.DefaultPopularity of them, as gpuplane-scheduler reads its
// targetWorkloadFile; nil under --dra-mig-order=table.
func (o DRAOptions) rank() (*placement.TargetWorkload, error) {
	if order, err := o.migOrder(); err != nil || order == placement.TableOrder {
		return nil, err
	}
	pods, err := trace.ReadTargetPods(o.TargetWorkloadFile)
	if err != nil {
		return nil, fmt.Errorf("--dra-target-workload-file: %w", err)
	}
	return placement.NewTargetWorkload(pods, placement.DefaultPopularity), nil
}

// shareMode is the share mode --dra-consumable-shares names (memory when
// empty).
func (o DRAOptions) shareMode() (dra.ShareMode, error) {
	if o.ConsumableShares == "" {
		return dra.ShareMode{}, nil
	}
	m, err := dra.ParseShareMode(o.ConsumableShares)
	if err != nil {
		return m, fmt.Errorf("--dra-consumable-shares: %w", err)
	}
	return m, nil
}

// openBackend opens the device backend the options name.
func openBackend(o Options) (device.Backend, error) {
	if o.Backend == "mock" {
		return mock.Open(o.MockProfile, mock.Options{FaultsFile: o.MockFaultsFile, MIGStateFile: o.MockMIGStateFile})
	}
	return nvml.Open() // without the NVIDIA driver: an error saying so
}

// restConfig returns the API server connection the options give: from
// Kubeconfig, or in-cluster credentials under LabelNode, NodeFeatureAPI or
// SchedulerChoice; nil without API access.
func restConfig(o Options) (*rest.Config, error) {
	switch {
	case o.Kubeconfig != "":
		rc, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--kubeconfig: %w", err)
		}
		return rc, nil
	case o.LabelNode || o.NodeFeatureAPI || o.SchedulerChoice || o.KubeletAPI == KubeletAPIDRA || o.NodeConfig.Dir != "":
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("--label-node, --node-feature-api, --scheduler-choice, --kubelet-api=dra or --config-dir: %w", err)
		}
		return rc, nil
	}
	return nil, nil
}

// kubeClient returns the API client of rc; nil without API access.
func kubeClient(rc *rest.Config) (kubernetes.Interface, error) {
	if rc == nil {
		return nil, nil
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	return c, nil
}

// Run runs the agent until ctx is done, then stops its servers and returns
// nil. Everything that can fail on bad input (options, configuration,
// backend, discovery, resources, metrics file, labels file, kubeconfig) is
// checked before any server starts, so the agent never runs
// half-configured. Under SchedulerChoice, Allocate gives pods that carry
// gpuplane-scheduler's choice the chosen GPUs (deviceplugin.Assignments).
// Under NodeConfig it returns an error wrapping ErrNodeConfigChanged when
// the node's label comes to select another configuration.
func Run(ctx context.Context, o Options) (err error) {
	defer klog.Flush()
	if err := o.Check(); err != nil {
		return err
	}
	client, dyn, err := apiClients(o)
	if err != nil {
		return err
	}
	if o.NodeConfig.Dir != "" {
		var stop func(error) error
		if ctx, o.ConfigFile, stop, err = useNodeConfig(ctx, o.NodeConfig, client, o.NodeName); err != nil {
			return err
		}
		defer func() { err = stop(err) }()
	}
	cfg, err := loadConfig(o)
	if err != nil {
		return err
	}
	b, err := openBackend(o)
	if err != nil {
		return err
	}
	defer b.Close()
	if o.KubeletAPI == KubeletAPIDRA {
		return runDRA(ctx, o, b, cfg, client, dyn)
	}
	m, err := deviceplugin.NewManager(ctx, b, cfg, o.DevicePluginDir)
	if err != nil {
		return err
	}
	removeCDI, err := writeDevicePluginCDI(o, cfg, m.Node())
	if err != nil {
		return err
	}
	defer func() {
		if err := removeCDI(); err != nil {
			klog.ErrorS(err, "Removing the CDI specs of the devices")
		}
	}()
	var translate func(exporter.PodSource) exporter.PodSource
	if o.SchedulerChoice {
		var closeKubelet func()
		if translate, closeKubelet, err = followSchedulerChoice(ctx, o, m, client); err != nil {
			return err
		}
		defer closeKubelet()
	}
	metrics, err := startMetrics(ctx, o.Metrics, b, o.NodeName, cfg, attribution{translate: translate})
	if err != nil {
		return err
	}
	defer metrics.stop()
	n := m.Node()
	klog.InfoS("Discovered GPUs", "backend", o.Backend, "gpus", len(n.GPUs), "driver", n.DriverVersion, "migStrategy", cfg.Flags.MIGStrategy)
	for _, p := range m.Plugins() {
		klog.InfoS("Serving resource", "resource", p.Resource().Name, "devices", len(p.Resource().Devices), "socket", p.Socket())
	}
	if err := newLabeler(o, cfg, client, dyn).write(ctx, n); err != nil {
		return err
	}
	if o.LabelNode {
		go publishHealth(ctx, client, o.NodeName, m.Health(), n, healthRetry)
		if !o.SchedulerChoice || o.Metrics.PodResourcesSocket == "" {
			go clearUnplaced(ctx, client, o.NodeName) // publishUnplaced reports otherwise
		}
	}
	err = m.Run(ctx)
	klog.InfoS("Stopped node agent")
	return err
}

// loadConfig returns the configuration: o.ConfigFile's (its warnings
// logged) or the default, with the XIDs the health policy ignores after
// --disable-health-checks and --enable-health-checks.
func loadConfig(o Options) (*configv1.Config, error) {
	cfg := configv1.DefaultConfig()
	if o.ConfigFile != "" {
		var err error
		if cfg, err = configv1.LoadConfig(o.ConfigFile); err != nil {
			return nil, err
		}
		for _, w := range cfg.Warnings {
			klog.Warning(w)
		}
	}
	ignored, warnings := health.IgnoredXIDs(*cfg.Gpuplane.IgnoredXIDs, o.DisableHealthChecks, o.EnableHealthChecks)
	for _, w := range warnings {
		klog.Warning(w)
	}
	cfg.Gpuplane.IgnoredXIDs = &ignored
	klog.InfoS("XIDs ignored by the health policy (0: all)", "xids", ignored)
	return cfg, nil
}

// apiClients returns the API clients o needs: the typed client, the
// dynamic client for NodeFeature objects; nil where none is needed.
func apiClients(o Options) (kubernetes.Interface, dynamic.Interface, error) {
	rc, err := restConfig(o)
	if err != nil {
		return nil, nil, err
	}
	// The typed client only for what uses it, each with its own RBAC
	// (docs/node-agent.md, "Permissions"): the Node's labels (--label-node:
	// get, patch on nodes), gpuplane-scheduler's choice on pods
	// (--scheduler-choice: list, patch on pods) and the DRA plugin
	// (--kubelet-api=dra: ResourceSlices, ResourceClaims, get on nodes)
	// and the Node's configuration label (--config-dir: get, list, watch
	// on nodes).
	var client kubernetes.Interface
	if o.LabelNode || o.SchedulerChoice || o.KubeletAPI == KubeletAPIDRA || o.NodeConfig.Dir != "" {
		if client, err = kubeClient(rc); err != nil {
			return nil, nil, err
		}
	}
	var dyn dynamic.Interface
	if o.NodeFeatureAPI {
		if dyn, err = dynamic.NewForConfig(rc); err != nil {
			return nil, nil, fmt.Errorf("API client: %w", err)
		}
	}
	return client, dyn, nil
}

// followSchedulerChoice makes m's Allocate give the GPUs gpuplane-scheduler
// chose (deviceplugin.Assignments), telling pods apart by the kubelet's
// pod-resources view. It returns the wrapper of the metrics' pod source
// that names the GPUs given, and the function that closes the
// pod-resources connection.
func followSchedulerChoice(ctx context.Context, o Options, m *deviceplugin.Manager, client kubernetes.Interface) (translate func(exporter.PodSource) exporter.PodSource, closeKubelet func(), err error) {
	as := deviceplugin.NewAssignments(client, o.NodeName)
	closeKubelet = func() {}
	if o.Metrics.PodResourcesSocket != "" {
		// The kubelet's view tells apart pods of equal requests.
		w, err := podresources.NewWatcher(o.Metrics.PodResourcesSocket, o.Metrics.PodResourcesInterval, o.Metrics.PodResourcesInterval)
		if err != nil {
			return nil, nil, err
		}
		closeKubelet = func() { _ = w.Close() }
		as.UseKubelet(w.List)
		if o.LabelNode {
			go publishUnplaced(ctx, client, o.NodeName, unplacedOf(as, m.Node()), o.Metrics.PodResourcesInterval)
		}
	}
	m.UseAssignments(as)
	klog.InfoS("Allocate follows gpuplane-scheduler's choice on pods", "node", o.NodeName, "podResourcesSocket", o.Metrics.PodResourcesSocket)
	gpus := m.Node().GPUs
	if err := as.Restore(ctx, func(i int) string {
		if i < len(gpus) {
			return gpus[i].UUID
		}
		return ""
	}); err != nil {
		klog.ErrorS(err, "The metrics name the kubelet's devices for pods allocated before this start")
	}
	translate = func(s exporter.PodSource) exporter.PodSource { return as.Translate(s) }
	return translate, closeKubelet, nil
}

// healthRetry is how long publishHealth waits after a failed write.
const healthRetry = 5 * time.Second

// publishHealth keeps the Node's resource.AnnotationNodeUnhealthyGPUs equal
// to h's unhealthy GPUs of n, so that gpuplane-scheduler never chooses
// them: written at start (which clears what an earlier run left) and after
// each change, a failed write retried every retry, until ctx is done.
func publishHealth(ctx context.Context, c kubernetes.Interface, node string, h *deviceplugin.Health, n device.Node, retry time.Duration) {
	changed, stop := h.Subscribe()
	defer stop()
	var written []int
	first := true
	for {
		if bad := h.Unhealthy(n); first || !slices.Equal(bad, written) {
			if err := labels.ApplyUnhealthy(ctx, c, node, bad); err != nil {
				klog.ErrorS(err, "Publishing unhealthy GPUs failed; retrying", "in", retry)
				select {
				case <-ctx.Done():
					return
				case <-time.After(retry):
				}
				continue
			}
			klog.InfoS("Published unhealthy GPUs on the Node", "node", node, "gpus", bad)
			written, first = bad, false
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// runDRA is Run with KubeletAPIDRA: the DRA plugin instead of the device
// plugin, the same labels and metrics.
func runDRA(ctx context.Context, o Options, b device.Backend, cfg *configv1.Config, client kubernetes.Interface, dyn dynamic.Interface) error {
	migMinors := dra.DefaultMIGMinorsPath // the NVIDIA driver's
	if o.Backend == "mock" {
		migMinors = "" // mock MIG devices have no capability nodes
	}
	lab := newLabeler(o, cfg, client, dyn)
	dm := drametrics.New(apidra.DriverName, o.NodeName)
	mode, err := o.DRA.shareMode()
	if err != nil {
		return err
	}
	rank, err := o.DRA.rank()
	if err != nil {
		return err
	}
	var edits *cdispec.ContainerEdits
	if o.DRA.ToolkitSpec == "" && o.DRA.CDIDir != "" {
		n, err := b.Discover(ctx)
		if err != nil {
			return err
		}
		if edits, err = driverEdits(o, n); err != nil {
			return err
		}
	}
	d, err := dra.New(ctx, b, dra.Config{
		Metrics:            dm,
		NodeName:           o.NodeName,
		KubeClient:         client,
		PluginDir:          o.DRA.PluginDir,
		RegistrarDir:       o.DRA.RegistrarDir,
		CDIDir:             o.DRA.CDIDir,
		ToolkitSpec:        o.DRA.ToolkitSpec,
		DriverEdits:        edits,
		DevRoot:            o.driverConfig("").HostDevRoot(),
		LocalDevRoot:       o.localDevRoot(),
		RediscoverInterval: o.DRA.RediscoverInterval,
		OnRediscover: func(ctx context.Context, n device.Node) {
			if err := lab.write(ctx, n); err != nil {
				klog.ErrorS(err, "Writing the GPU feature labels of the GPUs found again")
			}
		},
		MIGMinorsPath: migMinors,
		Shares:        o.DRA.Shares || o.DRA.ConsumableShares != "",
		ShareMode:     mode,
		BootIDPath:    o.DRA.BootIDFile,
		IgnoredXIDs:   *cfg.Gpuplane.IgnoredXIDs,
		Rank:          rank,
	})
	if err != nil {
		return err
	}
	n, err := b.Discover(ctx)
	if err != nil {
		return err
	}
	// The plugin's prepared claims give the exporter DRA pods' shares.
	metrics, err := startMetrics(ctx, o.Metrics, b, o.NodeName, cfg, attribution{claims: d, collectors: dm.Collectors()})
	if err != nil {
		return err
	}
	defer metrics.stop()
	klog.InfoS("Discovered GPUs", "backend", o.Backend, "gpus", len(n.GPUs), "driver", n.DriverVersion, "kubeletAPI", o.KubeletAPI)
	if err := lab.write(ctx, n); err != nil {
		return err
	}
	if err := d.Start(ctx); err != nil {
		return err
	}
	defer d.Stop()
	err = d.Run(ctx)
	klog.InfoS("Stopped node agent")
	return err
}

// driverConfig is the driver root the options give, for a driver of
// version: DriverRoot on the host (/ on the nvml backend when empty; ""
// for none on the mock backend), seen at ContainerDriverRoot when set.
func (o Options) driverConfig(version string) gpucdi.DriverConfig {
	host := o.DriverRoot
	if host == "" && o.Backend == "nvml" {
		host = gpucdi.DefaultDriverRoot
	}
	c := gpucdi.DriverConfig{Root: host, HostRoot: host, Version: version, HookPath: o.CDIHookPath}
	if o.ContainerDriverRoot != "" && host != "" {
		c.Root = o.ContainerDriverRoot
	}
	return c
}

// localDevRoot is where the agent sees the device nodes of its driver
// root (gpucdi.DevRoot of driverConfig's Root): the specs list only the
// control nodes present there; "" without a driver root (the mock
// backend's default), and the specs list all of them.
func (o Options) localDevRoot() string {
	if r := o.driverConfig("").Root; r != "" {
		return gpucdi.DevRoot(r)
	}
	return ""
}

// driverEdits returns the container edits of the driver's files under
// the driver root (gpucdi.DriverEdits) for the specs of --cdi-dir, of
// n's driver version; nil without --cdi-dir or a driver root. Under a
// --driver-root given, a root without the driver is an error: specs
// without its libraries give containers a GPU they cannot initialise.
// Under the default (/), it is logged and the specs have the device
// nodes alone, as before the driver's files were added: an agent in a
// container that does not see the host's driver keeps serving nodes
// whose NVIDIA runtime injects the libraries (NVIDIA_VISIBLE_DEVICES).
func driverEdits(o Options, n device.Node) (*cdispec.ContainerEdits, error) {
	c := o.driverConfig(n.DriverVersion)
	root := c.Root
	if o.DRA.CDIDir == "" || root == "" {
		return nil, nil
	}
	e, err := gpucdi.DriverEdits(c)
	if err != nil && o.DriverRoot == "" {
		klog.ErrorS(err, "CDI specs without the NVIDIA driver's files: give --driver-root where the agent sees the driver", "driverRoot", root)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--cdi-dir, --driver-root %s: %w", root, err)
	}
	klog.InfoS("CDI specs get the NVIDIA driver's files", "driverRoot", root, "driver", n.DriverVersion, "mounts", len(e.Mounts), "hooks", len(e.Hooks))
	return e, nil
}

// writeDevicePluginCDI writes, with --cdi-dir and a CDI device-list
// strategy (cdi-cri, cdi-annotations), the CDI spec of every device of n
// the device plugin may name (gpucdi.WriteNodeSpecs), as NVIDIA's plugin
// writes its spec at start; without --cdi-dir the names are left to
// NVIDIA's container toolkit's spec. It returns remove, which removes
// the specs written (Run calls it as the agent exits, so that an
// uninstalled agent leaves no spec naming devices nothing serves); a
// no-op when none were. On an error the specs written so far are removed.
func writeDevicePluginCDI(o Options, cfg *configv1.Config, n device.Node) (remove func() error, err error) {
	remove = func() error { return nil }
	if o.DRA.CDIDir == "" || (!cfg.HasListStrategy(configv1.ListCDICRI) && !cfg.HasListStrategy(configv1.ListCDIAnnotations)) {
		return remove, nil
	}
	edits, err := driverEdits(o, n)
	if err != nil {
		return remove, err
	}
	s := gpucdi.NodeSpecs{Dir: o.DRA.CDIDir, DevRoot: o.driverConfig("").HostDevRoot(), LocalDevRoot: o.localDevRoot(), Common: edits}
	if o.Backend == "nvml" {
		if s.MIGMinors, err = gpucdi.ReadMIGMinors(gpucdi.DefaultMIGMinorsPath); err != nil && hasMIG(n) {
			return remove, err
		}
	}
	uuids, err := gpucdi.WriteNodeSpecs(s, n)
	remove = func() error {
		var errs []error
		for _, u := range uuids {
			errs = append(errs, gpucdi.RemoveSpec(o.DRA.CDIDir, u))
		}
		return errors.Join(errs...)
	}
	if err != nil {
		return remove, errors.Join(fmt.Errorf("--cdi-dir: %w", err), remove())
	}
	klog.InfoS("Wrote the CDI specs of the devices", "dir", o.DRA.CDIDir, "devices", len(uuids))
	return remove, nil
}

// hasMIG reports whether a GPU of n is in MIG mode.
func hasMIG(n device.Node) bool {
	return slices.ContainsFunc(n.GPUs, func(g device.GPU) bool { return g.MIGEnabled })
}
