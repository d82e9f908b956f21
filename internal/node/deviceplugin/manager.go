// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"k8s.io/klog/v2"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/mps"
)

// KubeletSocketName is the kubelet's registration socket in the
// device-plugin directory.
const KubeletSocketName = "kubelet.sock"

// Manager runs the device-plugin servers of one node: it starts one per
// resource, registers them with the kubelet, registers again (with fresh
// sockets) whenever kubelet.sock is recreated, and feeds the backend's
// health events to the servers.
type Manager struct {
	dir     string
	backend device.Backend
	node    device.Node
	cfg     *configv1.Config
	health  *Health
	plugins []*Plugin
	mps     []mps.Daemon // the MPS control daemons started (mps.go)

	// RetryInterval is the longest wait before registering again after a
	// failure (default 2s). The first retry comes after RetryMin, and each
	// next one after twice the wait before, up to RetryInterval; a new
	// kubelet.sock starts again from RetryMin.
	RetryInterval time.Duration
}

// RetryMin is the first wait before registering again after a failure: the
// kubelet creates kubelet.sock a moment before it accepts connections.
const RetryMin = 20 * time.Millisecond

// NewManager discovers the backend's GPUs and works out the resources under
// c. It starts nothing, so a node or configuration that does not fit fails
// here, before any server runs. A relative dir is taken from the working
// directory. Faults the backend reports at discovery (device.Node.Faults)
// are in the health state from the start, so the kubelet's first
// ListAndWatch already shows them.
func NewManager(ctx context.Context, b device.Backend, c *configv1.Config, dir string) (*Manager, error) {
	n, err := b.Discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("discovering GPUs: %w", err)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	res, err := BuildResources(n, c)
	if err != nil {
		return nil, err
	}
	for _, e := range Excluded(n, c) {
		klog.ErrorS(e, "Devices not advertised")
	}
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--device-plugin-dir: %w (the kubelet creates it; create it yourself to test without one)", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("--device-plugin-dir %s: not a directory", dir)
	}
	m := &Manager{dir: dir, backend: b, node: n, cfg: c, health: NewHealth(n, *c.Gpuplane.IgnoredXIDs), RetryInterval: 2 * time.Second}
	for _, ev := range n.Faults {
		klog.ErrorS(nil, "Device faulty at discovery; advertised with its health", "uuid", ev.UUID, "kind", kindName(ev.Kind), "xid", ev.XID, "healthy", m.health.Healthy(ev.UUID))
	}
	for i := range res {
		m.plugins = append(m.plugins, NewPlugin(&m.node, &res[i], c, m.health, dir))
	}
	return m, nil
}

// UseAssignments makes every server's Allocate look up gpuplane-scheduler's
// choice through a (Plugin.Allocate); call it before Run.
func (m *Manager) UseAssignments(a *Assignments) {
	for _, p := range m.plugins {
		p.UseAssignments(a)
	}
}

// Node returns the discovered node.
func (m *Manager) Node() device.Node { return m.node }

// Plugins returns the servers, one per resource, sorted by resource name.
func (m *Manager) Plugins() []*Plugin { return m.plugins }

// Health returns the health state the servers report.
func (m *Manager) Health() *Health { return m.health }

// Run serves until ctx is done, then stops the servers and removes their
// sockets. It returns an error only if it cannot start: a socket that
// cannot be created, or a directory that cannot be watched.
func (m *Manager) Run(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.Add(m.dir); err != nil {
		return fmt.Errorf("watching %s: %w", m.dir, err)
	}
	if err := m.startMPS(ctx); err != nil {
		return err
	}
	defer m.stopMPS(ctx)
	defer m.stop()
	if err := m.start(); err != nil {
		return err
	}

	events := make(chan device.HealthEvent, 64)
	go func() {
		if err := m.backend.WatchHealth(ctx, events); err != nil && !errors.Is(err, context.Canceled) {
			klog.ErrorS(err, "Health watch ended; devices keep their last health")
		}
	}()

	kubelet := filepath.Join(m.dir, KubeletSocketName)
	pending := m.allPlugins() // not yet registered with the current kubelet
	wait := RetryMin
	retry := time.NewTimer(0) // register at once
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-events:
			if m.health.Apply(ev) {
				klog.InfoS("GPU health changed", "uuid", ev.UUID, "kind", kindName(ev.Kind), "xid", ev.XID, "healthy", m.health.Healthy(ev.UUID))
			}
		case ev := <-w.Events:
			if ev.Name != kubelet || !ev.Has(fsnotify.Create) {
				continue
			}
			// A new kubelet removes the plugin sockets when it starts:
			// serve on fresh ones, then register every resource again.
			klog.InfoS("Kubelet socket created; restarting device-plugin servers and registering again")
			if err := m.start(); err != nil {
				return err
			}
			pending, wait = m.allPlugins(), RetryMin
			retry.Reset(0)
		case err := <-w.Errors:
			klog.ErrorS(err, "Watching the device-plugin directory")
		case <-retry.C:
			if pending = m.register(ctx, kubelet, pending); len(pending) > 0 {
				var names []string
				for _, p := range pending {
					names = append(names, p.res.Name)
				}
				klog.InfoS("Registering again", "resources", names, "in", wait)
				retry.Reset(wait)
				wait = min(2*wait, max(m.RetryInterval, RetryMin))
			}
		}
	}
}

func (m *Manager) allPlugins() []*Plugin { return append([]*Plugin(nil), m.plugins...) }

func (m *Manager) start() error {
	for _, p := range m.plugins {
		if err := p.Start(); err != nil {
			m.stop()
			return err
		}
	}
	return nil
}

func (m *Manager) stop() {
	for _, p := range m.plugins {
		p.Stop()
	}
}

// register registers each plugin of ps with the kubelet and returns those
// that failed; one refused resource does not stop the others.
func (m *Manager) register(ctx context.Context, kubelet string, ps []*Plugin) []*Plugin {
	var failed []*Plugin
	for _, p := range ps {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := p.Register(rctx, kubelet)
		cancel()
		if err != nil {
			klog.ErrorS(err, "Registration failed", "resource", p.res.Name)
			failed = append(failed, p)
			continue
		}
		klog.InfoS("Registered with the kubelet", "resource", p.res.Name, "devices", len(p.res.Devices), "endpoint", filepath.Base(p.socket))
	}
	return failed
}

func kindName(k device.HealthKind) string {
	switch k {
	case device.HealthXID:
		return "xid"
	case device.HealthLost:
		return "lost"
	case device.HealthRecovered:
		return "recovered"
	}
	return "unknown"
}
