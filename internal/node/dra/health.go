// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/klog/v2"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Taint keys, NVIDIA's driver's (cmd/gpu-kubelet-plugin device_health.go):
// one key per health dimension under the driver's domain.
const (
	// TaintKeyXID: the device reported a critical XID, the value.
	TaintKeyXID = apidra.DriverName + "/xid"
	// TaintKeyGPULost: the GPU fell off the bus or stopped answering.
	TaintKeyGPULost = apidra.DriverName + "/gpu-lost"
)

// Run watches the backend's health, and rediscovers the GPUs every
// Config.RediscoverInterval, until ctx is done: a device made
// unhealthy by the agent's health policy (internal/node/health: a
// critical XID, a lost GPU) is tainted NoSchedule in the ResourceSlices,
// a MIG placement with its GPU, and its recovery removes the taint. When
// a rediscovery finds new GPUs the watch is started again, to cover
// them (the backends watch the GPUs found when the watch starts). It
// returns nil when ctx is done, or the watch's error.
func (d *Driver) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the watch and the rediscovery with Run
	newGPUs := make(chan struct{}, 1)
	go d.rediscoverEvery(ctx, d.cfg.RediscoverInterval, newGPUs)
	for {
		again, err := d.watchHealth(ctx, newGPUs)
		if !again {
			return err
		}
		klog.FromContext(ctx).Info("New GPUs: watching the health of all again", "gpus", len(d.Node().GPUs))
	}
}

// watchHealth runs the backend's health watch and applies its events
// until ctx is done or the watch ends (nil, or the watch's error), or
// until newGPUs fires: then it stops the watch, applies what the watch
// still sent, and reports again, so that Run starts a new one.
func (d *Driver) watchHealth(ctx context.Context, newGPUs <-chan struct{}) (again bool, err error) {
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	ch := make(chan device.HealthEvent, 16)
	errc := make(chan error, 1)
	go func() { errc <- d.backend.WatchHealth(wctx, ch) }()
	ended := func(err error) error {
		if err == nil || errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case err := <-errc:
			return false, ended(err)
		case ev := <-ch:
			d.ApplyHealth(ctx, ev)
		case <-newGPUs:
			stop()
			for {
				select {
				case err := <-errc:
					err = ended(err)
					return ctx.Err() == nil && err == nil, err
				case ev := <-ch:
					d.ApplyHealth(ctx, ev)
				}
			}
		}
	}
}

// ApplyHealth records a health event and republishes the ResourceSlices
// when a device's taints change.
func (d *Driver) ApplyHealth(ctx context.Context, ev device.HealthEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.applyHealth(ev) {
		return
	}
	close(d.changed)
	d.changed = make(chan struct{})
	klog.FromContext(ctx).Info("Device health changed", "uuid", ev.UUID, "healthy", ev.Kind == device.HealthRecovered, "xid", ev.XID)
	if err := d.publish(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Republishing ResourceSlices")
	}
}

// applyHealth records ev in the health state and the unhealthy events;
// d.mu is held. It reports whether a taint changed.
func (d *Driver) applyHealth(ev device.HealthEvent) bool {
	d.health.Apply(ev)
	old, had := d.unhealthy[ev.UUID]
	switch {
	case ev.Kind == device.HealthRecovered:
		delete(d.unhealthy, ev.UUID)
		return had
	case ev.Kind == device.HealthLost, ev.Kind == device.HealthXID && d.health.Critical(ev.XID):
		d.unhealthy[ev.UUID] = ev
		return !had || old.Kind != ev.Kind || old.XID != ev.XID
	}
	return false
}

// taintOf is the taint of an unhealthy event.
func taintOf(ev device.HealthEvent) resourceapi.DeviceTaint {
	if ev.Kind == device.HealthLost {
		return resourceapi.DeviceTaint{Key: TaintKeyGPULost, Effect: resourceapi.DeviceTaintEffectNoSchedule}
	}
	return resourceapi.DeviceTaint{Key: TaintKeyXID, Value: strconv.FormatUint(ev.XID, 10), Effect: resourceapi.DeviceTaintEffectNoSchedule}
}

// taints returns the taints of device name: its GPU's, and for a MIG
// device those of the MIG device (static, or created on the placement);
// d.mu is held.
func (d *Driver) taints(name string) []resourceapi.DeviceTaint {
	e := d.res.Entries[name]
	var out []resourceapi.DeviceTaint
	add := func(uuid string) {
		ev, ok := d.unhealthy[uuid]
		if !ok {
			return
		}
		t := taintOf(ev)
		for _, o := range out {
			if o.Key == t.Key {
				return
			}
		}
		out = append(out, t)
	}
	add(d.node.GPUs[e.GPU].UUID)
	if e.MIG != nil && e.MIG.UUID != "" {
		add(e.MIG.UUID) // a static MIG device
	}
	if e.MIG != nil {
		for _, pc := range d.cp.Claims {
			for _, pd := range pc.Devices {
				if pd.Device == name && pd.MIG != nil && pd.MIG.UUID != "" {
					add(pd.MIG.UUID)
				}
			}
		}
	}
	return out
}

// tainted returns the devices with their taints; d.mu is held.
func (d *Driver) tainted() Resources {
	r := d.res
	r.Devices = make([]resourceapi.Device, len(d.res.Devices))
	for i, dev := range d.res.Devices {
		dev.Taints = d.taints(dev.Name)
		r.Devices[i] = dev
	}
	return r
}

// healthResend is how often WatchHealthStatus repeats its report when
// nothing changes: well within the kubelet's 30 s before a device's health
// turns Unknown (kubeletplugin DeviceHealth.HealthCheckTimeout).
var healthResend = 10 * time.Second

// WatchHealthStatus serves the kubelet's device health stream (dra-health
// v1, KEP 4680; the kubelet shows it in the pod's
// status.containerStatuses[].allocatedResourcesStatus, the
// ResourceHealthStatus feature, beta and on since 1.36): a report of every
// published device, Unhealthy while it carries a taint (its message the
// taint, e.g. gpu.nvidia.com/xid=79), else Healthy; sent at once, on each
// taint change and every healthResend, until ctx is done.
func (d *Driver) WatchHealthStatus(ctx context.Context, reports chan<- kubeletplugin.DeviceHealthReport) error {
	t := time.NewTicker(healthResend)
	defer t.Stop()
	for {
		r, changed := d.healthReport()
		select {
		case <-ctx.Done():
			return nil
		case reports <- r:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-t.C:
		}
	}
}

// healthReport is the health of every published device, and the channel
// closed on the next taint change.
func (d *Driver) healthReport() (kubeletplugin.DeviceHealthReport, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	var r kubeletplugin.DeviceHealthReport
	for _, dev := range d.res.Devices {
		h := kubeletplugin.DeviceHealth{PoolName: d.cfg.NodeName, DeviceName: dev.Name, Health: kubeletplugin.HealthStatusHealthy, LastUpdated: now}
		if ts := d.taints(dev.Name); len(ts) > 0 {
			h.Health = kubeletplugin.HealthStatusUnhealthy
			msgs := make([]string, len(ts))
			for i, t := range ts {
				msgs[i] = t.Key
				if t.Value != "" {
					msgs[i] += "=" + t.Value
				}
			}
			h.Message = strings.Join(msgs, ", ")
		}
		r.Devices = append(r.Devices, h)
	}
	return r, d.changed
}
