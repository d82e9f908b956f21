// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

func TestCheckKubeletAPI(t *testing.T) {
	o := DefaultOptions()
	o.KubeletAPI = "csi"
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), `--kubelet-api "csi": want device-plugin or dra`) {
		t.Errorf("bogus API: %v", err)
	}
	o.KubeletAPI, o.NodeName = KubeletAPIDRA, ""
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "--kubelet-api=dra needs --node-name") {
		t.Errorf("dra without a node name: %v", err)
	}
	o.NodeName = "node-1"
	if err := o.Check(); err != nil {
		t.Errorf("dra with a node name: %v", err)
	}
}

// runDRA serves the mock's GPUs as ResourceSlices until ctx is done.
func TestRunDRA(t *testing.T) {
	dir, err := os.MkdirTemp("", "dra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	o := DefaultOptions()
	o.Backend, o.MockProfile, o.NodeName, o.KubeletAPI = "mock", "dgx-a100-80gb-mig", "node-1", KubeletAPIDRA
	o.DRA = DRAOptions{PluginDir: filepath.Join(dir, "p"), RegistrarDir: filepath.Join(dir, "r")}
	o.Metrics.Addr = ""
	for _, d := range []string{o.DRA.PluginDir, o.DRA.RegistrarDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u"}})
	n := 0
	client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if obj, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && obj.GetName() == "" {
			n++
			obj.SetName(obj.GetGenerateName() + string(rune('a'+n)))
		}
		return false, nil, nil
	})
	b, err := mock.Open(o.MockProfile, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := configv1.DefaultConfig()
	cfg.Gpuplane.IgnoredXIDs = &configv1.DefaultIgnoredXIDs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDRA(ctx, o, b, cfg, client, nil) }()
	// 8 A100s; the 6 with MIG have full layouts made outside DRA,
	// published as they are (4 × 7 + 2 × 4 = 36 MIG devices), which leave
	// no placement free: 38 devices in a slice (none consumes counters),
	// 6 counter sets in another.
	devices := 0
	err = wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil || len(l.Items) != 2 {
			return false, nil
		}
		devices = len(l.Items[0].Spec.Devices) + len(l.Items[1].Spec.Devices)
		return true, nil
	})
	if devices != 38 {
		t.Errorf("%d devices published, want 38", devices)
	}
	cancel()
	if err != nil {
		t.Fatalf("ResourceSlices: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("runDRA: %v", err)
	}
}
