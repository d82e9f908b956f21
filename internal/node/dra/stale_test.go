// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// liveUUIDs returns the UUIDs of the live MIG devices of GPU gpu.
func liveUUIDs(t *testing.T, b *mock.Backend, gpu string) []string {
	t.Helper()
	ins, err := b.MIGInstances(context.Background(), gpu)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		out = append(out, in.UUID)
	}
	return out
}

// TestUnprepareDestroysOnlyItsOwn: claim "old" gets a 1g.10gb at slot 2
// (GPU instance 1, the first free ID); its device is destroyed behind
// the plugin's back (a reboot, an administrator); claim "new" gets a
// 3g.40gb at slot 4, which takes GPU instance 1 again (the smallest free
// ID, as the mock and NVML give it). Unpreparing the stale "old" must not
// destroy "new"'s device: it is the same GPU instance ID with another
// UUID. GPU instance IDs are reused: NVIDIA's driver records the MIG
// device's UUID beside its IDs for this reason
// (NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/mig.go,
// MigLiveTuple: "those IDs may refer to a different device than assumed
// because they may be re-used"), though its deleteMigDevice (nvlib.go)
// leaves the UUID comparison commented out; here it is made.
func TestUnprepareDestroysOnlyItsOwn(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)
	g0 := n.GPUs[0].UUID

	old := k.claim("old", "gpu-0-mig-1g10gb-19-2")
	if _, errStr := k.prepare(old); errStr != "" {
		t.Fatal(errStr)
	}
	oldMIG := *d.Prepared()["uid-old"].Devices[0].MIG
	if oldMIG.GPUInstanceID != 1 {
		t.Fatalf("old's MIG device: GPU instance %d, want 1 (the first free)", oldMIG.GPUInstanceID)
	}
	if err := b.DestroyMIG(context.Background(), g0, oldMIG.GPUInstanceID, oldMIG.UUID); err != nil {
		t.Fatal(err)
	}

	nw := k.claim("new", "gpu-0-mig-3g40gb-9-4")
	if _, errStr := k.prepare(nw); errStr != "" {
		t.Fatal(errStr)
	}
	newMIG := *d.Prepared()["uid-new"].Devices[0].MIG
	if newMIG.GPUInstanceID != oldMIG.GPUInstanceID || newMIG.UUID == oldMIG.UUID {
		t.Fatalf("new's MIG device %+v: want GPU instance %d reused with a new UUID (old's %s)", newMIG, oldMIG.GPUInstanceID, oldMIG.UUID)
	}

	k.unprepare(old)
	if got := liveUUIDs(t, b, g0); !slices.Equal(got, []string{newMIG.UUID}) {
		t.Errorf("after old's unprepare live MIG devices %v, want new's %s alone", got, newMIG.UUID)
	}
	if _, held := d.Prepared()["uid-old"]; held {
		t.Error("old is still recorded after its unprepare")
	}
	// new's own device is destroyed by its unprepare.
	k.unprepare(nw)
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Errorf("after new's unprepare live MIG devices %s, want none", strings.Join(got, ","))
	}
}

// reboot stops plugin d and simulates a reboot of its node: the boot ID
// file gets id and the MIG state is gone (a fresh mock backend of the
// same profile, as MIG devices do not outlive a reboot without a tool
// that makes them again). It returns the new backend, its plugin not
// started.
func (k *kubelet) reboot(d *Driver, profile, id string) *mock.Backend {
	k.t.Helper()
	d.Stop()
	writeBootID(k.t, k.dirs.BootIDPath, id)
	b, _ := mockNode(k.t, profile)
	return b
}

func writeBootID(t *testing.T, path, id string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withBootID gives k's plugin a boot ID file of its own, of id.
func (k *kubelet) withBootID(id string) {
	k.dirs.BootIDPath = filepath.Join(k.t.TempDir(), "boot_id")
	writeBootID(k.t, k.dirs.BootIDPath, id)
}

// TestRebootPreparesAgain: a MIG claim and a whole-GPU claim are
// prepared; the node reboots (new boot ID, no MIG devices, the transient
// CDI directory empty). The plugin marks both claims PreBoot; the
// kubelet's next prepare of each (it prepares the claims of the pods it
// runs again) makes the MIG device again, a new one with a new UUID, and
// writes the CDI specs again; the whole GPU keeps its UUID and so its CDI
// name. NVIDIA's driver keys its checkpoint to the boot the same way
// (NVIDIA/k8s-dra-driver-gpu cmd/gpu-kubelet-plugin/checkpointv.go
// NodeBootID, device_state.go: "Invalidating checkpoint: checkpoint
// nodeBootID ... != current"), and there starts over with an empty one.
// A stale claim whose devices are no longer there fails, saying why.
func TestRebootPreparesAgain(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.withBootID("boot-1")
	d := k.start(b)
	g0 := n.GPUs[0].UUID
	mig, whole := k.claim("mig", "gpu-0-mig-3g40gb-9-4"), k.claim("whole", "gpu-1")
	gone := k.claim("gone", "gpu-0-mig-1g10gb-19-0")
	oldIDs := map[string][]string{}
	for _, c := range []*resourceapi.ResourceClaim{mig, whole, gone} {
		ids, errStr := k.prepare(c)
		if errStr != "" {
			t.Fatalf("prepare %s: %s", c.Name, errStr)
		}
		oldIDs[c.Name] = ids
	}

	b2 := k.reboot(d, twoA100, "boot-2")
	if err := os.RemoveAll(k.dirs.CDIDir); err != nil { // transient, as /var/run/cdi
		t.Fatal(err)
	}
	// After the reboot an administrator made a 2g.20gb at slot 0 (slots
	// 0-1): the 1g.10gb placement at 0 of "gone" overlaps it and is no
	// longer published; the 3g.40gb at 4 (slots 4-7) of "mig" is free.
	if _, err := b2.CreateMIG(context.Background(), g0, "2g.20gb", 0); err != nil {
		t.Fatal(err)
	}
	static := liveUUIDs(t, b2, g0)
	d = k.start(b2)
	for uid, pc := range d.Prepared() {
		if !pc.PreBoot {
			t.Errorf("claim %s after the reboot: not marked PreBoot", uid)
		}
	}
	if cp, err := loadCheckpoint(filepath.Join(k.dirs.PluginDir, checkpointFile)); err != nil {
		t.Error(err)
	} else if cp.NodeBootID != "boot-2" {
		t.Errorf("checkpoint after the reboot: boot ID %q, want boot-2", cp.NodeBootID)
	}

	ids, errStr := k.prepare(mig)
	if errStr != "" || len(ids) != 1 {
		t.Fatalf("prepare mig after the reboot: %v %q", ids, errStr)
	}
	live := liveUUIDs(t, b2, g0)
	made := *d.Prepared()["uid-mig"].Devices[0].MIG
	if ids[0] != "nvidia.com/gpu="+made.UUID || ids[0] == oldIDs["mig"][0] || len(live) != 2 || !slices.Contains(live, made.UUID) {
		t.Errorf("mig after the reboot: CDI %v, recorded %+v, live %v", ids, made, live)
	}
	// Ordered by GPU instance ID: the administrator's is 1, the claim's 2.
	if got := liveMIG(t, b2, g0); strings.Join(got, ",") != "2g.20gb@0,3g.40gb@4" {
		t.Errorf("live MIG devices %v, want the administrator's 2g.20gb@0 and the claim's 3g.40gb@4 made again", got)
	}
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, made.UUID)); err != nil {
		t.Errorf("the MIG device's CDI spec is not written again: %v", err)
	}
	if ids, errStr := k.prepare(whole); errStr != "" || !slices.Equal(ids, oldIDs["whole"]) {
		t.Errorf("prepare whole after the reboot: %v %q, want %v", ids, errStr, oldIDs["whole"])
	}
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)); err != nil {
		t.Errorf("gpu-1's CDI spec is not written again: %v", err)
	}
	for _, name := range []string{"uid-mig", "uid-whole"} {
		if pc := d.Prepared()[types.UID(name)]; pc.PreBoot || pc.State != PrepareCompleted {
			t.Errorf("%s prepared again: PreBoot %v, state %s", name, pc.PreBoot, pc.State)
		}
	}
	_, errStr = k.prepare(gone)
	if want := "claim default/gone was prepared before the node's reboot and cannot be prepared again: device gpu-0-mig-1g10gb-19-0 of request r0: no such device on node node-a"; errStr != want {
		t.Errorf("prepare gone after the reboot:\n got %q\nwant %q", errStr, want)
	}
	if got := liveUUIDs(t, b2, g0); !slices.Contains(got, static[0]) {
		t.Errorf("the static MIG device %s is gone: live %v", static[0], got)
	}
}

// TestRebootUnprepareDestroysNothing: claim "old" got a 1g.10gb at slot
// 2 (GPU instance 1) and "whole" gpu-1, their CDI specs in a directory
// that outlives the reboot. After the reboot an administrator makes a
// 1g.10gb at slot 2 again: GPU instance 1 again, and in the mock, whose
// UUIDs are seeded by the count of devices made since its start, the
// same UUID, so the UUID rule alone would take it for old's. Unpreparing
// the stale claims destroys nothing (nothing they made outlived the
// reboot) and removes their CDI specs; the records go.
func TestRebootUnprepareDestroysNothing(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.withBootID("boot-1")
	d := k.start(b)
	g0 := n.GPUs[0].UUID
	old, whole := k.claim("old", "gpu-0-mig-1g10gb-19-2"), k.claim("whole", "gpu-1")
	for _, c := range []*resourceapi.ResourceClaim{old, whole} {
		if _, errStr := k.prepare(c); errStr != "" {
			t.Fatalf("prepare %s: %s", c.Name, errStr)
		}
	}
	oldMIG := *d.Prepared()["uid-old"].Devices[0].MIG

	b2 := k.reboot(d, twoA100, "boot-2")
	admin, err := b2.CreateMIG(context.Background(), g0, "1g.10gb", 2)
	if err != nil {
		t.Fatal(err)
	}
	if admin.GPUInstanceID != oldMIG.GPUInstanceID || admin.UUID != oldMIG.UUID {
		t.Fatalf("the administrator's device %+v: want GPU instance %d and UUID %s again (the mock's seed)", admin.MIGDevice, oldMIG.GPUInstanceID, oldMIG.UUID)
	}
	d = k.start(b2)
	k.unprepare(old)
	k.unprepare(whole)
	if got := liveUUIDs(t, b2, g0); !slices.Equal(got, []string{admin.UUID}) {
		t.Errorf("live MIG devices after the stale unprepares %v, want the administrator's %s", got, admin.UUID)
	}
	for _, uuid := range []string{oldMIG.UUID, n.GPUs[1].UUID} {
		if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, uuid)); !os.IsNotExist(err) {
			t.Errorf("CDI spec of %s after the stale unprepare: %v", uuid, err)
		}
	}
	if p := d.Prepared(); len(p) != 0 {
		t.Errorf("claims still recorded: %v", p)
	}
}

// TestBootIDErrors: a boot ID file missing or empty fails New, naming
// the file; a checkpoint written before the boot ID was recorded is
// taken as this boot's (as NVIDIA's driver takes a legacy checkpoint,
// device_state.go: "does not contain a boot ID, injecting current boot
// ID"): its claims are not stale, and the boot ID is recorded.
func TestBootIDErrors(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	writeBootID(t, empty, "  ")
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "none"), "dra: boot ID: open " + filepath.Join(dir, "none") + ": no such file or directory"},
		{empty, "dra: boot ID file " + empty + " is empty"},
		{dir, "dra: boot ID: read " + dir + ": is a directory"},
	} {
		cfg := k.dirs
		cfg.BootIDPath = tc.path
		if _, err := New(context.Background(), b, cfg); err == nil || err.Error() != tc.want {
			t.Errorf("boot ID file %s: error %v, want %s", tc.path, err, tc.want)
		}
	}

	cp := &Checkpoint{Version: checkpointVersion, Claims: map[types.UID]*PreparedClaim{"uid-c": {
		Namespace: "default", Name: "c", State: PrepareCompleted,
		Devices: []PreparedDevice{{Requests: []string{"r0"}, Pool: node, Device: "gpu-1", GPUUUID: n.GPUs[1].UUID}},
	}}}
	path := filepath.Join(k.dirs.PluginDir, checkpointFile)
	if err := cp.save(path); err != nil {
		t.Fatal(err)
	}
	k.withBootID("boot-1")
	d, err := New(context.Background(), b, k.dirs)
	if err != nil {
		t.Fatal(err)
	}
	if pc := d.Prepared()["uid-c"]; pc.PreBoot {
		t.Error("a claim of a checkpoint without boot ID is marked PreBoot")
	}
	if got, err := loadCheckpoint(path); err != nil {
		t.Error(err)
	} else if got.NodeBootID != "boot-1" {
		t.Errorf("checkpoint: boot ID %q, want boot-1", got.NodeBootID)
	}
}
