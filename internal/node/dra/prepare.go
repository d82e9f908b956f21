// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"errors"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
)

// The steps of a claim's prepare (Driver.prepare), each undone by
// release when a later one fails:
//
//  1. planClaim: every check, nothing held: the allocation is this
//     node's, its devices exist and no other claim holds them, a static
//     MIG device is still live, the configurations decode and MPS can
//     run (its limits, its control program);
//  2. the record, PrepareStarted, in the checkpoint: a restart finds it;
//  3. createClaimMIG: the MIG devices to create, each recorded once made;
//  4. startClaimMPS (mps.go): the MPS control daemons;
//  5. writeClaimCDI: the CDI specs, the device's and the claim's;
//  6. the record, PrepareCompleted.

// planClaim returns the record of claim c's devices of this driver,
// PrepareStarted, after every check that needs nothing held; prev is
// the record an interrupted prepare left (nil for none), whose MIG
// devices are adopted and whose MPS daemons are kept in the record. d.mu
// is held.
func (d *Driver) planClaim(ctx context.Context, c *resourceapi.ResourceClaim, prev *PreparedClaim) (*PreparedClaim, error) {
	if c.Status.Allocation == nil {
		return nil, fmt.Errorf("claim %s/%s is not allocated", c.Namespace, c.Name)
	}
	configs, err := d.configsFor(c)
	if err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	prevDev := map[string]PreparedDevice{}
	if prev != nil {
		for _, pd := range prev.Devices {
			prevDev[pd.Device] = pd
		}
	}
	pc := &PreparedClaim{Namespace: c.Namespace, Name: c.Name, State: PrepareStarted}
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Driver != apidra.DriverName {
			continue
		}
		if r.Pool != d.cfg.NodeName {
			return nil, fmt.Errorf("device %s of request %s: pool %q is not this node's (%s)", r.Device, r.Request, r.Pool, d.cfg.NodeName)
		}
		e, ok := d.res.Entries[r.Device]
		if !ok {
			return nil, fmt.Errorf("device %s of request %s: no such device on node %s", r.Device, r.Request, d.cfg.NodeName)
		}
		admin := r.AdminAccess != nil && *r.AdminAccess
		if other, ok := d.conflict(r.Device, e, c.UID); ok && !admin {
			return nil, fmt.Errorf("device %s of request %s: %s", r.Device, r.Request, other)
		}
		g := d.node.GPUs[e.GPU]
		pd := PreparedDevice{Requests: []string{r.Request}, Pool: r.Pool, Device: r.Device, ShareID: r.ShareID, GPUUUID: g.UUID, ConsumedCapacity: r.ConsumedCapacity, Config: configs[r.Device]}
		// An interrupted prepare's daemon: stopped if this one fails first.
		pd.MPSDaemon = prevDev[r.Device].MPSDaemon
		if admin {
			// Admin access consumes nothing (adminMIG, KEP-5018).
			pd.AdminAccess, pd.ConsumedCapacity, pd.Config = true, nil, nil
		}
		switch {
		case admin && e.MIG != nil:
			if err := d.adminMIG(ctx, &pd, e); err != nil {
				return nil, fmt.Errorf("device %s of request %s: %w", r.Device, r.Request, err)
			}
		case e.MIG != nil && e.MIG.UUID != "":
			in, err := d.checkStatic(ctx, g.UUID, e.MIG.UUID)
			if err != nil {
				return nil, fmt.Errorf("device %s of request %s: %w", r.Device, r.Request, err)
			}
			pd.StaticMIG, pd.StaticInstance = e.MIG.UUID, &in
		case e.MIG != nil:
			pd.MIG = &PreparedMIG{GIProfile: e.MIG.GIProfile, Start: e.MIG.Start}
			if m := prevDev[r.Device].MIG; m != nil {
				pd.MIG = m
			}
		}
		pc.Devices = append(pc.Devices, pd)
	}
	if err := checkMPS(pc.Devices); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	if err := d.checkMPSControl(pc.Devices); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	return pc, nil
}

// createClaimMIG creates (or adopts) the MIG devices of claim uid's
// record pc, saving the checkpoint after each: a restart finds it.
func (d *Driver) createClaimMIG(ctx context.Context, uid types.UID, pc *PreparedClaim) error {
	for i := range pc.Devices {
		pd := &pc.Devices[i]
		if pd.MIG == nil {
			continue
		}
		if err := d.createMIG(ctx, uid, pd); err != nil {
			return fmt.Errorf("device %s: %w", pd.Device, err)
		}
		if err := d.cp.save(d.checkpointPath()); err != nil {
			return err
		}
	}
	return nil
}

// writeClaimCDI writes the CDI specs of claim uid's devices (writeCDI).
func (d *Driver) writeClaimCDI(uid types.UID, pc *PreparedClaim) error {
	for i := range pc.Devices {
		if err := d.writeCDI(uid, &pc.Devices[i]); err != nil {
			return err
		}
	}
	return nil
}

// rollback undoes what a failed prepare of claim uid holds (release),
// so that nothing stays held and its unprepare has nothing left to do.
// interrupted says the record was left by an interrupted prepare (a
// restart in between): a MIG device it created may not be recorded yet,
// and is looked up. Where the rollback fails (a MIG device not destroyed,
// a launched MPS daemon that does not quit) the record stays, and
// unprepare, or the next prepare, takes it up again. d.mu is held.
func (d *Driver) rollback(ctx context.Context, uid types.UID, interrupted bool) {
	pc, ok := d.cp.Claims[uid]
	if !ok || pc.State == PrepareCompleted {
		return
	}
	if err := d.release(ctx, uid, pc, interrupted); err != nil {
		klog.FromContext(ctx).Error(err, "Rolling back a failed prepare; the claim stays recorded for its unprepare", "claim", klog.KRef(pc.Namespace, pc.Name), "uid", uid)
		return
	}
	klog.FromContext(ctx).V(2).Info("Rolled back a failed prepare", "claim", klog.KRef(pc.Namespace, pc.Name), "uid", uid)
}

// release undoes everything record pc of claim uid holds and drops it:
// the MPS daemons no other claim uses (first: a MIG device an MPS server
// holds is in use), the MIG devices created for it, the claim's CDI
// specs and the device specs no other claim uses; of a claim prepared
// before the node's reboot (PreBoot) nothing is destroyed. lookup looks for a
// MIG device whose UUID is not recorded (an interrupted prepare's, at
// its placement, held by no other claim). The record goes once all is
// undone; an error leaves it, for the next try. d.mu is held.
func (d *Driver) release(ctx context.Context, uid types.UID, pc *PreparedClaim, lookup bool) error {
	if err := d.stopClaimMPS(ctx, uid, pc); err != nil {
		return err
	}
	for i := range pc.Devices {
		pd := &pc.Devices[i]
		if pd.MIG == nil || pc.PreBoot { // a MIG device does not outlive a reboot
			continue
		}
		if pd.MIG.UUID == "" && lookup {
			if err := d.createMIGLookup(ctx, uid, pd); err != nil {
				return err
			}
		}
		if pd.MIG.UUID == "" {
			continue
		}
		if err := d.destroyMIG(ctx, pd); err != nil {
			return err
		}
	}
	delete(d.cp.Claims, uid)
	var errs []error
	for _, pd := range pc.Devices {
		errs = append(errs, removeClaimCDISpec(d.claimCDIDir(), uid, pd.Device))
	}
	if d.cfg.CDIDir != "" {
		for _, pd := range pc.Devices {
			if uuid := pd.cdiUUID(); uuid != "" && !d.cdiInUse(uuid) {
				errs = append(errs, removeCDISpec(d.cfg.CDIDir, uuid))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		d.cp.Claims[uid] = pc
		return err
	}
	return d.cp.save(d.checkpointPath())
}

// destroyMIG destroys the MIG device created for pd, by its GPU instance
// ID and only while that instance still holds the device of the UUID
// recorded (device.MIGManager.DestroyMIG): an ID is reused once its
// instance is gone (a reboot, an administrator), and another claim's
// device may hold it now. A device gone, or replaced by another, is
// logged and destroys nothing.
func (d *Driver) destroyMIG(ctx context.Context, pd *PreparedDevice) error {
	log := klog.FromContext(ctx)
	err := d.mig.DestroyMIG(ctx, pd.GPUUUID, pd.MIG.GPUInstanceID, pd.MIG.UUID)
	switch {
	case err == nil:
		log.Info("Destroyed a MIG device", "device", pd.Device, "mig", pd.MIG.UUID, "gpuInstance", pd.MIG.GPUInstanceID)
	case errors.Is(err, device.ErrNotFound), errors.Is(err, device.ErrNotOwned):
		log.Info("Not destroying a MIG device: the one created for the claim is gone", "device", pd.Device, "mig", pd.MIG.UUID, "gpuInstance", pd.MIG.GPUInstanceID, "reason", err.Error())
	default:
		return fmt.Errorf("device %s: destroying MIG device %s: %w", pd.Device, pd.MIG.UUID, err)
	}
	return nil
}

// adminMIG gives admin access pd the MIG device at its placement e as it
// is: the one made outside DRA, else the one a workload's claim created
// there. Admin access never creates nor destroys a MIG device (it is
// recorded as StaticMIG): on a placement where none is made it fails.
// Upstream's allocator gives admin access any device, in use or not, and
// counts it as holding nothing (k8s.io/dynamic-resource-allocation
// v0.37.2 structured/internal/stable/allocator_stable.go allocateDevice:
// "Mark as in use (unless we do admin access)"; k8s.io/kubernetes
// pkg/scheduler/framework/plugins/dynamicresources/allocateddevices.go:
// an adminAccess result "Is not considered as allocated"); KEP-5018.
// d.mu is held.
func (d *Driver) adminMIG(ctx context.Context, pd *PreparedDevice, e Entry) error {
	uuid := e.MIG.UUID
	if uuid == "" {
		uuid = d.createdMIG(pd.Device)
	}
	if uuid == "" {
		return fmt.Errorf("admin access never creates a MIG device, and none is made at this placement (no claim holds it)")
	}
	in, err := d.checkStatic(ctx, pd.GPUUUID, uuid)
	if err != nil {
		return err
	}
	pd.StaticMIG, pd.StaticInstance = uuid, &in
	return nil
}

// createdMIG returns the UUID of the MIG device a workload's claim
// prepared in this boot created for device name, "" for none.
func (d *Driver) createdMIG(name string) string {
	for _, pc := range d.cp.Claims {
		if pc.PreBoot {
			continue
		}
		for _, pd := range pc.Devices {
			if pd.Device == name && pd.MIG != nil && pd.MIG.UUID != "" {
				return pd.MIG.UUID
			}
		}
	}
	return ""
}
