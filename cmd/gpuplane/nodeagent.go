package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/device"
	"github.com/gpuplane/gpuplane/internal/device/mock"
	"github.com/gpuplane/gpuplane/internal/deviceplugin"
	"github.com/gpuplane/gpuplane/internal/labels"
)

// nodeAgentOptions are the node-agent flags.
type nodeAgentOptions struct {
	backend         string
	mockProfile     string
	mockFaultsFile  string
	devicePluginDir string
	configFile      string
	nodeName        string
	labelsFile      string
	labelNode       bool
}

var nodeAgentOpts = nodeAgentOptions{}

var nodeAgentCmd = &cobra.Command{
	Use:   "node-agent",
	Short: "Kubelet device plugin, GPU feature labels and GPU health for one node",
	Long: `node-agent makes a node's GPUs schedulable: it discovers them (through NVML,
or a mock profile), serves the kubelet device-plugin API for nvidia.com/gpu
and the MIG resources, reports GPU health and writes GPU feature labels.
It exits cleanly on SIGTERM or SIGINT.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		return runNodeAgent(ctx, nodeAgentOpts)
	},
}

func init() {
	f := nodeAgentCmd.Flags()
	o := &nodeAgentOpts
	f.StringVar(&o.backend, "backend", "nvml", "device backend: nvml or mock")
	f.StringVar(&o.mockProfile, "mock-profile", "dgx-h100", "mock backend: built-in profile name ("+joinNames(mock.Builtins())+") or profile file")
	f.StringVar(&o.mockFaultsFile, "mock-faults-file", "", "mock backend: YAML file of current GPU faults, watched for changes")
	f.StringVar(&o.devicePluginDir, "device-plugin-dir", "/var/lib/kubelet/device-plugins", "kubelet device-plugin directory (holds kubelet.sock)")
	f.StringVar(&o.configFile, "config", "", "device-plugin configuration file (YAML, version: v1)")
	f.StringVar(&o.nodeName, "node-name", os.Getenv("NODE_NAME"), "name of this node (default $NODE_NAME)")
	f.StringVar(&o.labelsFile, "labels-file", "", "write GPU feature labels to this node-feature-discovery features file (e.g. /etc/kubernetes/node-feature-discovery/features.d/gpuplane)")
	f.BoolVar(&o.labelNode, "label-node", false, "put GPU feature labels on the Node object --node-name (in-cluster credentials)")
	gfs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(gfs)
	f.AddGoFlagSet(gfs)
	rootCmd.AddCommand(nodeAgentCmd)
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}

// openBackend opens the device backend the options name.
func openBackend(o nodeAgentOptions) (device.Backend, error) {
	switch o.backend {
	case "mock":
		return mock.Open(o.mockProfile, mock.Options{FaultsFile: o.mockFaultsFile})
	case "nvml":
		return openNVML()
	}
	return nil, fmt.Errorf("--backend %q: want nvml or mock", o.backend)
}

// runNodeAgent runs the agent until ctx is done. Everything that can fail
// on bad input (configuration, backend, discovery, resources) is checked
// before any server starts, so the agent never runs half-configured.
func runNodeAgent(ctx context.Context, o nodeAgentOptions) error {
	defer klog.Flush()
	if o.labelNode && o.nodeName == "" {
		return fmt.Errorf("--label-node needs --node-name (or $NODE_NAME)")
	}
	cfg := configv1.DefaultConfig()
	if o.configFile != "" {
		var err error
		if cfg, err = configv1.LoadConfig(o.configFile); err != nil {
			return err
		}
	}
	b, err := openBackend(o)
	if err != nil {
		return err
	}
	defer b.Close()
	m, err := deviceplugin.NewManager(ctx, b, cfg, o.devicePluginDir)
	if err != nil {
		return err
	}
	metrics, err := startMetrics(ctx, b, o.nodeName, cfg) // GPU metrics: metrics.go
	if err != nil {
		return err
	}
	defer metrics.stop()
	n := m.Node()
	klog.InfoS("Discovered GPUs", "backend", o.backend, "gpus", len(n.GPUs), "driver", n.DriverVersion, "migStrategy", cfg.Flags.MIGStrategy)
	for _, p := range m.Plugins() {
		klog.InfoS("Serving resource", "resource", p.Resource().Name, "devices", len(p.Resource().Devices), "socket", p.Socket())
	}
	if err := writeLabels(ctx, o, n, cfg); err != nil {
		return err
	}
	err = m.Run(ctx)
	klog.InfoS("Stopped node agent")
	return err
}

// writeLabels writes the GPU feature labels where the options say: the
// features file at once (an error stops the agent), the Node object in the
// background, retrying until it succeeds.
func writeLabels(ctx context.Context, o nodeAgentOptions, n device.Node, cfg *configv1.Config) error {
	l := labels.Compute(n, labels.OptionsFrom(cfg))
	if o.labelsFile != "" {
		if err := labels.WriteFeatureFile(o.labelsFile, l); err != nil {
			return err
		}
		klog.InfoS("Wrote GPU feature labels", "file", o.labelsFile, "labels", len(l))
	}
	if o.labelNode {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return fmt.Errorf("--label-node: %w", err)
		}
		c, err := kubernetes.NewForConfig(rc)
		if err != nil {
			return fmt.Errorf("--label-node: %w", err)
		}
		go func() {
			for {
				err := labels.ApplyToNode(ctx, c, o.nodeName, l)
				if err == nil {
					klog.InfoS("Labelled node", "node", o.nodeName, "labels", len(l))
					return
				}
				klog.ErrorS(err, "Labelling node failed; retrying in 30s", "node", o.nodeName)
				select {
				case <-ctx.Done():
					return
				case <-time.After(30 * time.Second):
				}
			}
		}()
	}
	return nil
}
