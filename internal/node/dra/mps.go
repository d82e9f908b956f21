// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/node/mps"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	cdispec "tags.cncf.io/container-device-interface/specs-go"
)

// MPS control daemons, as NVIDIA's driver runs them
// (cmd/gpu-kubelet-plugin/sharing.go, MpsControlDaemon, and
// templates/mps-control-daemon.tmpl.yaml): one per claim and group of
// devices under one MPS configuration, with a pipe and a log directory of
// its own under <plugin dir>/mps/<id>, started with CUDA_VISIBLE_DEVICES
// set to the devices' UUIDs, then given the configuration's default
// active thread percentage and pinned memory limits. NVIDIA's driver runs
// the daemon in a Deployment; gpuplane runs nvidia-cuda-mps-control
// itself, from the agent (which sees the host's driver), with the code the
// device plugin's sharing.mps uses too (internal/node/mps). A share of a
// GPU (--dra-shares) is served by one daemon per GPU that its claims have
// in common (one MPS server per GPU), so that the per-client limits each
// share's container gets (shareEnv) bind.
const (
	// DefaultMPSControl is the MPS control program, looked up on PATH.
	DefaultMPSControl = mps.DefaultControl
	// mpsDirName is the daemons' directory in the plugin directory.
	mpsDirName = "mps"
	// mpsContainerPipeDir is where a container sees its daemon's pipe
	// directory, NVIDIA's driver's (GetCDIContainerEdits).
	mpsContainerPipeDir = "/tmp/nvidia-mps"
)

// mpsClaimID is the daemon ID of a claim's devices, NVIDIA's
// (GetMpsControlDaemonID): the claim UID and the first 5 hex digits of the
// SHA-256 of the UUIDs joined by commas.
func mpsClaimID(uid types.UID, uuids []string) string {
	h := sha256.Sum256([]byte(strings.Join(uuids, ",")))
	return string(uid) + "-" + hex.EncodeToString(h[:])[:5]
}

// mpsSharedID is the daemon ID of the shares of one GPU: "gpu-" and the
// first 12 hex digits of the SHA-256 of its UUID.
func mpsSharedID(gpuUUID string) string {
	h := sha256.Sum256([]byte(gpuUUID))
	return "gpu-" + hex.EncodeToString(h[:])[:12]
}

// daemon returns the daemon id serving uuids.
func (d *Driver) daemon(id string, uuids []string) mps.Daemon {
	return mps.New(filepath.Join(d.cfg.PluginDir, mpsDirName), id, uuids)
}

// mpsCtl runs Config.MPSControl, else mps.DefaultControl.
func (d *Driver) mpsCtl() mps.Control { return mps.Control{Program: d.cfg.MPSControl} }

// mpsLimits are the default pinned device memory limits of the daemon's
// devices as the control program takes them ("<MiB>M"), by UUID, as
// NVIDIA's MpsPerDevicePinnedMemoryLimit.Normalize: the default for every
// device, then the per-device ones, keyed by UUID or by index into
// uuids. A limit under 1 MiB, or a key naming no device, is an error.
func mpsLimits(c *MPSConfig, uuids []string) (map[string]string, error) {
	out := map[string]string{}
	if c == nil {
		return out, nil
	}
	mb := func(q resource.Quantity) (string, bool) {
		v := q.Value() >> 20
		return strconv.FormatInt(v, 10) + "M", v > 0
	}
	if q := c.DefaultPinnedDeviceMemoryLimit; q != nil && len(uuids) > 0 {
		v, ok := mb(*q)
		if !ok {
			return nil, fmt.Errorf("sharing.mpsConfig.defaultPinnedDeviceMemoryLimit: %s is under 1Mi", q)
		}
		for _, u := range uuids {
			out[u] = v
		}
	}
	for k, q := range c.DefaultPerDevicePinnedMemoryLimit {
		id := k
		if !slices.Contains(uuids, k) {
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(uuids) {
				return nil, fmt.Errorf("sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit: %q is neither a UUID nor an index of the claim's %d devices", k, len(uuids))
			}
			id = uuids[i]
		}
		v, ok := mb(q)
		if !ok {
			return nil, fmt.Errorf("sharing.mpsConfig.defaultPerDevicePinnedMemoryLimit[%s]: %s is under 1Mi", k, &q)
		}
		out[id] = v
	}
	return out, nil
}

// startMPS starts daemon m and configures it from c (mps.Control.Start),
// unless it was started before; the limits are checked first. Errors
// name the daemon.
func (d *Driver) startMPS(ctx context.Context, m mps.Daemon, c *MPSConfig) error {
	if mps.Started(m) {
		return nil
	}
	limits, err := mpsLimits(c, m.UUIDs)
	if err != nil {
		return err
	}
	s := mps.Settings{PinnedMemLimits: limits}
	if c != nil {
		s.ActiveThreadPercentage = c.DefaultActiveThreadPercentage
	}
	return d.mpsCtl().Start(ctx, m, s)
}

// stopMPS stops daemon m (mps.Control.Stop).
func (d *Driver) stopMPS(ctx context.Context, m mps.Daemon) error {
	return d.mpsCtl().Stop(ctx, m)
}

// checkMPSControl refuses claims under an MPS configuration where the
// control program cannot be found (exec.LookPath: on PATH, or the path
// given), before anything is held: the daemon could neither start nor be
// told to quit.
func (d *Driver) checkMPSControl(pds []PreparedDevice) error {
	for _, pd := range pds {
		if c := pd.Config; c != nil && c.Sharing != nil && c.Sharing.Strategy == MPSStrategy {
			if err := d.mpsCtl().Find(); err != nil {
				return fmt.Errorf("device %s: sharing strategy MPS needs NVIDIA's MPS control program, which the node agent cannot find (%w): this node refuses MPS claims until %s is on the agent's PATH", pd.Device, err, d.mpsCtl().Name())
			}
			return nil
		}
	}
	return nil
}

// logMPSControl logs at start when the MPS control program cannot be
// found: claims under an MPS configuration will be refused.
func (d *Driver) logMPSControl() {
	if err := d.mpsCtl().Find(); err != nil {
		klog.InfoS("Claims under an MPS configuration will be refused: NVIDIA's MPS control program is not found", "program", d.mpsCtl().Name(), "err", err)
	}
}

// mpsGroups returns the MPS daemons a claim's devices need, with the
// configuration of each, and sets each device's MPSDaemon: devices under
// one MPS configuration (GpuConfig or MigDeviceConfig) share a daemon of
// the claim; a share of a GPU uses the GPU's shared daemon. Devices
// without a UUID yet (a MIG device not created) must not be passed.
func (d *Driver) mpsGroups(uid types.UID, pds []PreparedDevice) map[string]mpsGroup {
	byConfig := map[*DeviceConfig][]int{}
	var order []*DeviceConfig
	out := map[string]mpsGroup{}
	for i := range pds {
		pd := &pds[i]
		c := pd.Config
		if c == nil || c.Sharing == nil || c.Sharing.Strategy != MPSStrategy {
			continue
		}
		if pd.ShareID != nil {
			m := d.daemon(mpsSharedID(pd.GPUUUID), []string{pd.GPUUUID})
			pd.MPSDaemon = m.ID
			out[m.ID] = mpsGroup{daemon: m, config: c.Sharing.MPSConfig}
			continue
		}
		if _, ok := byConfig[c]; !ok {
			order = append(order, c)
		}
		byConfig[c] = append(byConfig[c], i)
	}
	for _, c := range order {
		var uuids []string
		for _, i := range byConfig[c] {
			uuids = append(uuids, pds[i].cdiUUID())
		}
		m := d.daemon(mpsClaimID(uid, uuids), uuids)
		for _, i := range byConfig[c] {
			pds[i].MPSDaemon = m.ID
		}
		out[m.ID] = mpsGroup{daemon: m, config: c.Sharing.MPSConfig}
	}
	return out
}

// mpsGroup is a daemon and the configuration it is started with.
type mpsGroup struct {
	daemon mps.Daemon
	config *MPSConfig
}

// mpsInUse reports whether a device of another claim than self uses the
// daemon id.
func (d *Driver) mpsInUse(id string, self types.UID) bool {
	for uid, pc := range d.cp.Claims {
		if uid == self {
			continue
		}
		for _, pd := range pc.Devices {
			if pd.MPSDaemon == id {
				return true
			}
		}
	}
	return false
}

// stopClaimMPS stops the daemons of claim uid's devices that no other
// claim uses.
func (d *Driver) stopClaimMPS(ctx context.Context, uid types.UID, pc *PreparedClaim) error {
	done := map[string]bool{}
	for _, pd := range pc.Devices {
		if pd.MPSDaemon == "" || done[pd.MPSDaemon] || d.mpsInUse(pd.MPSDaemon, uid) {
			continue
		}
		done[pd.MPSDaemon] = true
		if err := d.stopMPS(ctx, d.daemon(pd.MPSDaemon, nil)); err != nil {
			return fmt.Errorf("device %s: %w", pd.Device, err)
		}
	}
	return nil
}

// mpsEdits are the container edits of a device served by an MPS daemon:
// the daemon's pipe directory mounted at /tmp/nvidia-mps and
// CUDA_MPS_PIPE_DIRECTORY naming it, as NVIDIA's driver gives them
// (GetCDIContainerEdits); nil for none.
func (d *Driver) mpsEdits(pd PreparedDevice) *cdispec.ContainerEdits {
	if pd.MPSDaemon == "" {
		return nil
	}
	m := d.daemon(pd.MPSDaemon, nil)
	return &cdispec.ContainerEdits{
		Env:    []string{"CUDA_MPS_PIPE_DIRECTORY=" + mpsContainerPipeDir},
		Mounts: []*cdispec.Mount{{HostPath: m.PipeDir, ContainerPath: mpsContainerPipeDir, Options: []string{"rw", "nosuid", "nodev", "bind"}}},
	}
}

// startClaimMPS starts the MPS daemons of a claim's devices (their
// UUIDs known), once their IDs are in the checkpoint: a restart finds
// and stops them.
func (d *Driver) startClaimMPS(ctx context.Context, uid types.UID, pc *PreparedClaim) error {
	groups := d.mpsGroups(uid, pc.Devices)
	if len(groups) == 0 {
		return nil
	}
	if err := d.cp.save(d.checkpointPath()); err != nil {
		return err
	}
	ids := make([]string, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if err := d.startMPS(ctx, groups[id].daemon, groups[id].config); err != nil {
			return err
		}
	}
	return nil
}

// checkMPS checks the MPS configurations of a claim's devices before
// anything is done: the memory limits name its devices (by UUID, or by
// index among the devices of the configuration) and are at least 1 MiB.
// A MIG device to be created has no UUID yet: only indices name it.
func checkMPS(pds []PreparedDevice) error {
	uuids := map[*DeviceConfig][]string{}
	for _, pd := range pds {
		if c := pd.Config; c != nil && c.Sharing != nil && c.Sharing.Strategy == MPSStrategy {
			uuids[c] = append(uuids[c], pd.cdiUUID())
		}
	}
	for c, us := range uuids {
		if _, err := mpsLimits(c.Sharing.MPSConfig, us); err != nil {
			return err
		}
	}
	return nil
}
