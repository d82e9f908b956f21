// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

// A second write (GPUs found again) stops the first's background work,
// here waiting 30 s to retry a failed patch of the Node, and waits for it
// before it starts: the first is never retried (2 patches in all, not 3),
// and the Node and the features file end with the second's labels,
// nvidia.com/gpu.count 2 after 1.
func TestLabelerWritesAgain(t *testing.T) {
	p, err := mock.ParseProfile("p.yaml", []byte("name: p\ndriverVersion: \"535.104.05\"\ncudaDriverVersion: \"12.2\"\ngpus:\n  - productName: NVIDIA A100-SXM4-80GB\n  - productName: NVIDIA A100-SXM4-80GB\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := mock.New(p, mock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	both, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	one := both
	one.GPUs = []device.GPU{both.GPUs[0]}

	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}})
	var patches atomic.Int32
	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if patches.Add(1) == 1 {
			return true, nil, errors.New("the API server is away")
		}
		return false, nil, nil
	})
	o := DefaultOptions()
	o.NodeName, o.LabelNode, o.LabelsFile = "n", true, filepath.Join(t.TempDir(), "gpu")
	w := newLabeler(o, configv1.DefaultConfig(), client, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := w.write(ctx, one); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return patches.Load() == 1, nil
	}); err != nil {
		t.Fatal("the first patch was not tried")
	}
	if err := w.write(ctx, both); err != nil { // the first waits 30 s to retry
		t.Fatal(err)
	}
	w.done.Wait()
	node, err := client.CoreV1().Nodes().Get(ctx, "n", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Labels["nvidia.com/gpu.count"]; got != "2" || patches.Load() != 2 {
		t.Errorf("node gpu.count %q after %d patches, want 2 after 2", got, patches.Load())
	}
	file, err := os.ReadFile(o.LabelsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(file), "nvidia.com/gpu.count=2\n") {
		t.Errorf("features file:\n%s", file)
	}
}
