// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/exporter"
	"github.com/gpuplane/gpuplane/internal/node/podresources"
)

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

// attribution is what the exporter learns from the node agent about the
// pods' devices, beyond pod-resources.
type attribution struct {
	// claims, when not nil, tells the shares of DRA devices (the DRA
	// plugin).
	claims exporter.ClaimShares
	// translate, when not nil, wraps the pod-resources source so that it
	// names the devices given by the scheduler's choice
	// (deviceplugin.Assignments.Translate).
	translate func(exporter.PodSource) exporter.PodSource
	// collectors are served besides the exporter's (the DRA plugin's
	// nvidia_dra_* series, drametrics).
	collectors []prometheus.Collector
}

// startMetrics listens on o.Addr and serves the backend's metrics, under
// the configuration's health policy, until ctx is done or stop is called.
// It returns nil, nil when o.Addr is empty. at says how pods are
// attributed beyond the kubelet's pod-resources API.
func startMetrics(ctx context.Context, o MetricsOptions, b device.Backend, nodeName string, cfg *configv1.Config, at attribution) (*metricsServer, error) {
	if o.Addr == "" {
		return nil, nil
	}
	opts := exporter.Options{
		Logger:         slog.New(logr.ToSlogHandler(klog.Background())),
		Backend:        b,
		Config:         cfg,
		Hostname:       nodeName,
		SampleInterval: o.SampleInterval,
		StaleAfter:     o.StaleAfter,
		VirtualGPUs:    o.VirtualGPUs,
		Claims:         at.claims,
		Collectors:     at.collectors,
	}
	if opts.Hostname == "" {
		opts.Hostname, _ = os.Hostname()
	}
	if o.File != "" {
		fields, warnings, err := exporter.LoadFields(o.File)
		if err != nil {
			return nil, fmt.Errorf("--metrics-file: %w", err)
		}
		for _, w := range warnings {
			klog.Warning("--metrics-file: ", w)
		}
		opts.Fields = fields
	}
	var pods *podresources.Watcher
	if o.PodResourcesSocket != "" {
		var err error
		if pods, err = podresources.NewWatcher(o.PodResourcesSocket, o.PodResourcesInterval, o.PodResourcesInterval); err != nil {
			return nil, err
		}
		opts.Pods = pods
		if at.translate != nil {
			opts.Pods = at.translate(pods)
		}
	}
	e, err := exporter.New(opts)
	if err != nil {
		return nil, fmt.Errorf("--metrics-sample-interval, --metrics-stale-after: %w", err)
	}
	l, err := net.Listen("tcp", o.Addr)
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
	klog.InfoS("Serving GPU metrics", "address", l.Addr().String(), "path", "/metrics", "sampleInterval", o.SampleInterval, "podResourcesSocket", o.PodResourcesSocket)
	return m, nil
}
