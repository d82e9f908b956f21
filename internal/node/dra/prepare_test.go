// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// TestPrepareFailsHoldsNothing fails a claim's prepare at each step
// (prepare.go) and checks that nothing stays held: no record (in the
// plugin nor in its checkpoint file), no MIG device, no MPS daemon (those
// launched told to quit, those never launched told nothing), no CDI spec;
// that its unprepare succeeds and runs nothing; and that the same devices
// are then prepared for a claim without the fault. The claim is a MIG
// device created on GPU 0 (MPS under a MigDeviceConfig) and the whole
// GPU 1 (MPS under a GpuConfig), in that order.
func TestPrepareFailsHoldsNothing(t *testing.T) {
	const mig, whole = "gpu-0-mig-3g40gb-9-4", "gpu-1"
	for _, tc := range []struct {
		name string
		// fault sets the fault up and returns the claim's devices.
		fault func(t *testing.T, k *kubelet, b *mock.Backend, faults string) []string
		err   string
		// daemons: whether MPS daemons are started; failD: whether -d
		// fails (none is launched, none is told to quit).
		daemons, failD bool
	}{{
		name: "plan: a device the node does not have",
		fault: func(t *testing.T, k *kubelet, b *mock.Backend, _ string) []string {
			return []string{mig, "gpu-7"}
		},
		err: "device gpu-7 of request r1: no such device on node node-a",
	}, {
		name: "MIG: the second device overlaps the first",
		fault: func(t *testing.T, k *kubelet, b *mock.Backend, _ string) []string {
			return []string{mig, "gpu-0-mig-1g10gb-19-5", whole}
		},
		err: "device gpu-0-mig-1g10gb-19-5: ",
	}, {
		name: "MPS: the control program fails at -d",
		fault: func(t *testing.T, k *kubelet, b *mock.Backend, faults string) []string {
			touchFile(t, filepath.Join(faults, "fail-d"))
			return []string{mig, whole}
		},
		err:     "nvidia-cuda-mps-control -d: exit status 1",
		daemons: true, failD: true,
	}, {
		name: "MPS: the second daemon's configuration fails",
		fault: func(t *testing.T, k *kubelet, b *mock.Backend, faults string) []string {
			touchFile(t, filepath.Join(faults, "fail-set_default_active_thread_percentage"))
			return []string{mig, whole}
		},
		err: "set_default_active_thread_percentage: exit status 1",
		// The MIG device's daemon (no settings) and GPU 1's are started
		// in the order of their IDs: one or both are launched.
		daemons: true,
	}, {
		name: "CDI: GPU 1's spec cannot be written",
		fault: func(t *testing.T, k *kubelet, b *mock.Backend, _ string) []string {
			// A directory where the spec's file goes: the rename fails.
			n, err := b.Discover(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID), 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{mig, whole}
		},
		err:     "device gpu-1: CDI spec: ",
		daemons: true,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			record := fakeMPS(t)
			faults := filepath.Dir(record)
			seen := 0
			runs := func() string {
				var out []string
				for _, l := range records(t, record, &seen) {
					f := strings.Split(l, "|")
					w, _, _ := strings.Cut(f[4], " ")
					out = append(out, f[0]+w)
				}
				return strings.Join(out, ",")
			}
			b, n := mockNode(t, twoA100)
			k := newKubelet(t)
			d := k.start(b)
			configs := []resourceapi.DeviceAllocationConfiguration{
				opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, migMPS),
				opaque(resourceapi.AllocationConfigSourceClaim, apidra.DriverName, gpuMPS),
			}
			c := k.withConfig(k.claim("c", tc.fault(t, k, b, faults)...), configs...)
			if _, errStr := k.prepare(c); !strings.Contains(errStr, tc.err) || errStr == "" {
				t.Fatalf("prepare: error %q, want %q", errStr, tc.err)
			}
			// Each daemon launched (its -d succeeded) is told to quit, last.
			got := strings.Split(runs(), ",")
			launched := strings.Count(strings.Join(got, ","), "-d")
			if tc.failD {
				launched = 0
			}
			quits := slices.Repeat([]string{"quit"}, launched)
			if !tc.daemons && got[0] != "" || tc.daemons && (got[0] != "-d" || !slices.Equal(got[len(got)-launched:], quits) || strings.Count(strings.Join(got, ","), "quit") != launched) {
				t.Errorf("control program runs %q, want each daemon launched told to quit", got)
			}
			if p := d.Prepared(); len(p) != 0 {
				t.Errorf("recorded after the failure: %v", p)
			}
			cp, err := loadCheckpoint(filepath.Join(k.dirs.PluginDir, checkpointFile))
			if err != nil || len(cp.Claims) != 0 {
				t.Errorf("checkpoint file after the failure: %v %v", cp, err)
			}
			if got := liveMIG(t, b, n.GPUs[0].UUID); len(got) != 0 {
				t.Errorf("live MIG devices after the failure: %v", got)
			}
			for _, dir := range []string{filepath.Join(k.dirs.PluginDir, mpsDirName), k.dirs.CDIDir} {
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					var names []string
					for _, e := range entries {
						names = append(names, e.Name())
					}
					t.Errorf("%s after the failure: %v", dir, names)
				}
			}
			k.unprepare(c)
			if got := runs(); got != "" {
				t.Errorf("control program runs on unprepare: %q, want none", got)
			}

			// Nothing held: the same devices for another claim, fault gone.
			entries, _ := os.ReadDir(faults)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), "fail") {
					if err := os.Remove(filepath.Join(faults, e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			os.Remove(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)) // the CDI fault's directory, if left
			ok := k.withConfig(k.claim("ok", mig, whole), configs...)
			if ids, errStr := k.prepare(ok); errStr != "" || len(ids) != 4 {
				t.Errorf("the same devices for another claim: %v %q", ids, errStr)
			}
			k.unprepare(ok)
			if got := liveMIG(t, b, n.GPUs[0].UUID); len(got) != 0 || len(d.Prepared()) != 0 {
				t.Errorf("after the other claim's unprepare: live %v, recorded %v", got, d.Prepared())
			}
		})
	}
}

func touchFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
