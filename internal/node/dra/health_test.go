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

// TestHealthTaints drives the mock's faults file: a critical XID taints
// its GPU's device, an application XID does not, a lost GPU taints the
// GPU and every MIG placement of it, recovery removes the taints.
func TestHealthTaints(t *testing.T) {
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
	k.waitTaints("gpu-0", "gpu.nvidia.com/gpu-lost=:NoSchedule") // the GPU and its 26 placements
	k.waitTaints("gpu-1", "")
	if got := len(k.taintsNow("gpu-0")); got != 26 {
		t.Errorf("%d gpu-0 devices, want 26", got)
	}
	write("faults: []\n")
	k.waitTaints("gpu-", "")
}
