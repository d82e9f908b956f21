package main

// The node agent's metrics endpoint (issue 4): flags and start-up. The node
// agent calls startMetrics once its backend is open.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/device"
	"github.com/gpuplane/gpuplane/internal/exporter"
	"github.com/gpuplane/gpuplane/internal/podresources"
)

// metricsOptions are the node agent's metrics flags.
type metricsOptions struct {
	addr                 string
	file                 string
	sampleInterval       time.Duration
	staleAfter           time.Duration
	podResourcesSocket   string
	podResourcesInterval time.Duration
}

var metricsOpts metricsOptions

func init() {
	f := nodeAgentCmd.Flags()
	o := &metricsOpts
	f.StringVar(&o.addr, "metrics-addr", ":9400", "address to serve GPU metrics on, at /metrics (empty: no metrics)")
	f.StringVar(&o.file, "metrics-file", "", "metrics file selecting the DCGM fields served, in dcgm-exporter's counters format (default: all)")
	f.DurationVar(&o.sampleInterval, "metrics-sample-interval", exporter.DefaultSampleInterval, "time between two samples of the GPUs")
	f.DurationVar(&o.staleAfter, "metrics-stale-after", 0, "age past which a GPU's last sample is no longer served (default 3 sample intervals)")
	f.StringVar(&o.podResourcesSocket, "pod-resources-socket", podresources.DefaultSocket, "kubelet pod-resources socket, for pod labels (empty: no pod labels)")
	f.DurationVar(&o.podResourcesInterval, "pod-resources-interval", 5*time.Second, "time between two reads of the pod-resources socket; also each read's deadline")
}

// metricsServer is a started metrics endpoint.
type metricsServer struct {
	cancel context.CancelFunc
	done   chan error
}

// stop stops the endpoint and waits for it.
func (m *metricsServer) stop() error {
	if m == nil {
		return nil
	}
	m.cancel()
	return <-m.done
}

// startMetrics checks the metrics flags, listens on --metrics-addr and
// serves the backend's metrics until ctx is done or stop is called. It
// returns nil, nil when --metrics-addr is empty.
func startMetrics(ctx context.Context, b device.Backend, nodeName string, cfg *configv1.Config) (*metricsServer, error) {
	o := metricsOpts
	if o.addr == "" {
		return nil, nil
	}
	if o.sampleInterval <= 0 || o.staleAfter < 0 || o.podResourcesInterval <= 0 {
		return nil, errors.New("--metrics-sample-interval and --pod-resources-interval must be positive, --metrics-stale-after not negative")
	}
	opts := exporter.Options{
		Logger:         slog.New(logr.ToSlogHandler(klog.Background())),
		Backend:        b,
		Config:         cfg,
		Hostname:       nodeName,
		SampleInterval: o.sampleInterval,
		StaleAfter:     o.staleAfter,
	}
	if opts.Hostname == "" {
		opts.Hostname, _ = os.Hostname()
	}
	if o.file != "" {
		var err error
		if opts.Fields, err = exporter.LoadFields(o.file); err != nil {
			return nil, fmt.Errorf("--metrics-file: %w", err)
		}
	}
	var pods *podresources.Watcher
	if o.podResourcesSocket != "" {
		var err error
		if pods, err = podresources.NewWatcher(o.podResourcesSocket, o.podResourcesInterval, o.podResourcesInterval); err != nil {
			return nil, err
		}
		opts.Pods = pods
	}
	e, err := exporter.New(opts)
	if err != nil {
		return nil, fmt.Errorf("--metrics-sample-interval, --metrics-stale-after: %w", err)
	}
	l, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	m := &metricsServer{cancel: cancel, done: make(chan error, 1)}
	if pods != nil {
		go pods.Run(ctx)
	}
	go func() { _ = e.Run(ctx) }()
	go func() { m.done <- e.Serve(ctx, l) }()
	klog.InfoS("Serving GPU metrics", "address", l.Addr().String(), "path", "/metrics", "sampleInterval", o.sampleInterval, "podResourcesSocket", o.podResourcesSocket)
	return m, nil
}
