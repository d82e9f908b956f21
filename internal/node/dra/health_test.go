// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	healthpb "k8s.io/kubelet/pkg/apis/dra-health/v1"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// taintsNow returns the published taints, "device key=value:effect", of
// the devices whose names start with prefix.
func (k *kubelet) taintsNow(prefix string) map[string]string {
	k.t.Helper()
	list, err := k.client.ResourceV1().ResourceSlices().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range list.Items {
		for _, d := range s.Spec.Devices {
			if !strings.HasPrefix(d.Name, prefix) {
				continue
			}
			var ts []string
			for _, t := range d.Taints {
				ts = append(ts, fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect))
			}
			out[d.Name] = strings.Join(ts, ",")
		}
	}
	return out
}

// waitTaints waits until every published device starting with prefix has
// the taints want ("" for none).
func (k *kubelet) waitTaints(prefix, want string) {
	k.t.Helper()
	var got map[string]string
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got = k.taintsNow(prefix)
		if len(got) == 0 {
			return false, nil
		}
		for _, v := range got {
			if v != want {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		k.t.Fatalf("devices %s*: taints %v, want %q on all", prefix, got, want)
	}
}

// startHealth starts the plugin over the two A100s of twoA100 with a
// mock faults file, and its health watch (Driver.Run) until the test ends.
func startHealth(t *testing.T) (*kubelet, device.Node, string) {
	t.Helper()
	faults := filepath.Join(t.TempDir(), "faults.yaml")
	p, err := mock.ParseProfile("test.yaml", []byte(twoA100))
	if err != nil {
		t.Fatal(err)
	}
	b, err := mock.New(p, mock.Options{FaultsFile: faults})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := b.Discover(context.Background())
	k := newKubelet(t)
	d := k.start(b)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return k, n, faults
}

// TestHealthTaints drives the mock's faults file: a critical XID taints
// its GPU's device, an application XID does not, a lost GPU taints the
// GPU and every MIG placement of it, recovery removes the taints.
func TestHealthTaints(t *testing.T) {
	k, n, faults := startHealth(t)
	k.slices(2)

	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(faults, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(fmt.Sprintf("faults:\n  - uuid: %s\n    xid: 79\n  - uuid: %s\n    xid: 13\n", n.GPUs[1].UUID, n.GPUs[0].UUID))
	k.waitTaints("gpu-1", "gpu.nvidia.com/xid=79:NoSchedule")
	k.waitTaints("gpu-0", "") // XID 13 is an application's
	write(fmt.Sprintf("faults:\n  - uuid: %s\n    lost: true\n", n.GPUs[0].UUID))
	k.waitTaints("gpu-0", "gpu.nvidia.com/gpu-lost=:NoSchedule") // the GPU's 25 placements
	k.waitTaints("gpu-1", "")
	if got := len(k.taintsNow("gpu-0")); got != 25 {
		t.Errorf("%d gpu-0 devices, want 25", got)
	}
	write("faults: []\n")
	k.waitTaints("gpu-", "")
}

// TestHealthStream reads the plugin's device health stream as the kubelet
// does (dra-health v1 NodeWatchResources over dra.sock,
// pkg/kubelet/cm/dra/healthinfo in v1.37.2): every published device
// Healthy at first (two A100s, GPU 0 MIG-enabled: its 25 placements, and
// gpu-1: 26 devices); XID 79 on GPU 0 makes its 25 placements Unhealthy with the taint as message, gpu-1 stays Healthy;
// recovery makes them Healthy again.
func TestHealthStream(t *testing.T) {
	k, n, faults := startHealth(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stream, err := healthpb.NewDRAResourceHealthClient(k.conn).NodeWatchResources(ctx, &healthpb.NodeWatchResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// next reads reports until want holds of one: unhealthy device counts
	// by GPU ("gpu-0", "gpu-1") and the message of gpu-0-mig-7g80gb-0-0.
	next := func(what string, want func(total int, bad map[string]int, msg string) bool) {
		t.Helper()
		for {
			r, err := stream.Recv()
			if err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			bad, msg := map[string]int{}, ""
			for _, h := range r.GetDevices() {
				if h.GetDevice().GetPoolName() != node {
					t.Fatalf("pool %q", h.GetDevice().GetPoolName())
				}
				if h.GetHealth() == healthpb.HealthStatus_UNHEALTHY {
					name := h.GetDevice().GetDeviceName()
					bad[name[:5]]++
					if name == "gpu-0-mig-7g80gb-0-0" {
						msg = h.GetMessage()
					}
				}
			}
			if want(len(r.GetDevices()), bad, msg) {
				return
			}
		}
	}
	next("all healthy", func(total int, bad map[string]int, _ string) bool { return total == 26 && len(bad) == 0 })
	if err := os.WriteFile(faults, []byte(fmt.Sprintf("faults:\n  - uuid: %s\n    xid: 79\n", n.GPUs[0].UUID)), 0o644); err != nil {
		t.Fatal(err)
	}
	next("gpu-0 unhealthy", func(total int, bad map[string]int, msg string) bool {
		return total == 26 && bad["gpu-0"] == 25 && bad["gpu-1"] == 0 && msg == "gpu.nvidia.com/xid=79"
	})
	if err := os.WriteFile(faults, []byte("faults: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next("recovered", func(total int, bad map[string]int, _ string) bool { return total == 26 && len(bad) == 0 })
}
