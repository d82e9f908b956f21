// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/klog/v2"
)

// DefaultBootIDPath is the Linux kernel's boot ID (a UUID made anew at
// each boot), the default of Config.BootIDPath.
const DefaultBootIDPath = "/proc/sys/kernel/random/boot_id"

// readBootID returns the boot ID in file path, trimmed; a missing,
// unreadable or empty file is an error naming it.
func readBootID(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("boot ID: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if id == "" {
		return "", fmt.Errorf("boot ID file %s is empty", path)
	}
	return id, nil
}

// checkBoot keys the checkpoint to this boot, as NVIDIA's driver does
// (NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/checkpointv.go
// NodeBootID, device_state.go NewDeviceState): a checkpoint written
// under another boot ID was written before a reboot, and the MIG
// devices, MPS daemons and transient CDI specs its claims hold went with
// it. NVIDIA's driver then starts over with an empty checkpoint; here
// each such claim is kept, marked PreBoot (markStale), so that its next
// prepare (the kubelet prepares the claims of the pods it runs again)
// prepares it anew from its allocation and its unprepare removes its CDI
// specs and destroys nothing. A checkpoint without a boot ID (written
// before this record) is taken as this boot's. The checkpoint is saved
// with this boot's ID.
func (d *Driver) checkBoot(ctx context.Context) error {
	path := d.cfg.BootIDPath
	if path == "" {
		path = DefaultBootIDPath
	}
	id, err := readBootID(path)
	if err != nil {
		return err
	}
	if d.cp.NodeBootID == id {
		return nil
	}
	if d.cp.NodeBootID != "" {
		klog.FromContext(ctx).Info("The node rebooted since the checkpoint was written: its claims are prepared again at their next prepare", "checkpointBootID", d.cp.NodeBootID, "bootID", id, "claims", len(d.cp.Claims))
		if err := d.markStale(); err != nil {
			return err
		}
	}
	d.cp.NodeBootID = id
	return d.cp.save(d.checkpointPath())
}

// markStale marks every claim of the checkpoint PreBoot and forgets its
// MPS daemons: they died with the reboot, and their directories (whose
// marks say a daemon runs) are removed without telling them to quit.
func (d *Driver) markStale() error {
	var errs []error
	for _, pc := range d.cp.Claims {
		pc.PreBoot = true
		for i := range pc.Devices {
			pd := &pc.Devices[i]
			if pd.MPSDaemon == "" {
				continue
			}
			if err := os.RemoveAll(d.daemon(pd.MPSDaemon, nil).Root); err != nil {
				errs = append(errs, fmt.Errorf("MPS control daemon %s of before the reboot: %w", pd.MPSDaemon, err))
			}
			pd.MPSDaemon = ""
		}
	}
	return errors.Join(errs...)
}
