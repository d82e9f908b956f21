// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"fmt"
	"slices"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/node/device"
)

// Rediscover discovers the node's GPUs again and, when what the plugin
// publishes would change (a GPU appeared or went, its MIG mode changed, a
// MIG device was made or destroyed outside DRA), publishes the new
// devices; changed reports whether it did. A change that would take away
// a device a prepared claim holds is not applied: the error names the
// device and the claim, and the old devices stay published until a later
// call finds the claim unprepared. A GPU no longer found (NVML skips a
// lost one) is an error too, changing nothing: the health watch taints
// it.
func (d *Driver) Rediscover(ctx context.Context) (changed bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := d.backend.Discover(ctx)
	if err != nil {
		return false, fmt.Errorf("dra: rediscovery: %w", err)
	}
	if g, ok := missingGPU(d.node, n); ok {
		// NVML skips a lost GPU: it stays published, tainted gpu-lost by
		// the health watch, until the agent restarts.
		return false, fmt.Errorf("dra: rediscovery: GPU %s (%s) is not found; the devices stay as they are", g.UUID, gpuName(g))
	}
	res, f, err := d.resources(ctx, n)
	if err != nil {
		return false, fmt.Errorf("dra: rediscovery: %w", err)
	}
	f.logHalfMade() // at each rediscovery, until it is destroyed
	if apiequality.Semantic.DeepEqual(res.Devices, d.res.Devices) && apiequality.Semantic.DeepEqual(res.Counters, d.res.Counters) {
		return false, nil
	}
	for uid, pc := range d.cp.Claims {
		for _, pd := range pc.Devices {
			if _, ok := res.Entries[pd.Device]; !ok {
				return false, fmt.Errorf("dra: rediscovery: device %s, prepared for claim %s/%s (%s), would no longer be published; the devices stay as they are until it is unprepared", pd.Device, pc.Namespace, pc.Name, uid)
			}
		}
	}
	klog.FromContext(ctx).Info("GPUs changed: publishing the new devices", "before", len(d.res.Devices), "after", len(res.Devices))
	f.log()
	d.node, d.res, d.outside = n, res, f.static
	if err := d.publish(ctx); err != nil {
		return true, fmt.Errorf("dra: rediscovery: %w", err)
	}
	return true, nil
}

// missingGPU returns a GPU of old that now is not in n.
func missingGPU(old, n device.Node) (device.GPU, bool) {
	for _, g := range old.GPUs {
		if !slices.ContainsFunc(n.GPUs, func(x device.GPU) bool { return x.UUID == g.UUID }) {
			return g, true
		}
	}
	return device.GPU{}, false
}

// Node returns the GPUs as last discovered: at New, or by the last
// Rediscover that changed what is published.
func (d *Driver) Node() device.Node {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.node
}

// rediscoverEvery calls Rediscover every interval until ctx is done,
// logging its errors; interval 0: never. After a change it calls
// Config.OnRediscover, and signals newGPUs (without blocking) when GPUs
// appeared: the health watch must start again to cover them.
func (d *Driver) rediscoverEvery(ctx context.Context, interval time.Duration, newGPUs chan<- struct{}) {
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		before := len(d.Node().GPUs)
		changed, err := d.Rediscover(ctx)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Rediscovering GPUs")
		}
		if !changed {
			continue
		}
		n := d.Node()
		if len(n.GPUs) > before { // none can go: Rediscover refuses that
			select {
			case newGPUs <- struct{}{}:
			default:
			}
		}
		if d.cfg.OnRediscover != nil {
			d.cfg.OnRediscover(ctx, n)
		}
	}
}
