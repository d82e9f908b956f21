// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// bindHandle is the part of the framework's handle Bind uses.
type bindHandle struct {
	fwk.Handle
	cs kubernetes.Interface
}

func (h bindHandle) ClientSet() kubernetes.Interface { return h.cs }
func (h bindHandle) APICacher() fwk.APICacher        { return nil }

// bindClient is a clientset whose pods' Bind is bind, called
// concurrently (the fake clientset's reactors run one at a time).
type bindClient struct {
	*fake.Clientset
	bind func() error
}

func (c bindClient) CoreV1() corev1.CoreV1Interface {
	return bindCore{c.Clientset.CoreV1(), c.bind}
}

type bindCore struct {
	corev1.CoreV1Interface
	bind func() error
}

func (c bindCore) Pods(ns string) corev1.PodInterface {
	return bindPods{c.CoreV1Interface.Pods(ns), c.bind}
}

type bindPods struct {
	corev1.PodInterface
	bind func() error
}

func (p bindPods) Bind(context.Context, *v1.Binding, metav1.CreateOptions) error { return p.bind() }

// TestBindsInFlight: GPUPlacement's binds wait for a slot once
// maxBindsInFlight are under way. 64 binds are held in the API call; a
// 65th, whose context has ended, gives up without a request (it would
// reach the API server, and count 65, without the bound), and once the
// held ones return, 100 more all bind, never more than 64 at once.
func TestBindsInFlight(t *testing.T) {
	var inFlight, most, calls atomic.Int64
	gate := make(chan struct{})
	arrived := make(chan struct{}, 1000)
	var open atomic.Bool // the gate is open
	cs := bindClient{fake.NewClientset(), func() error {
		if calls.Add(1) > maxBindsInFlight && !open.Load() {
			return errors.New("a bind past the bound reached the API server")
		}
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		arrived <- struct{}{}
		<-gate
		return nil
	}}
	pl := &Plugin{handle: bindHandle{cs: cs}, binds: newBindSlots(maxBindsInFlight)}
	bind := func(ctx context.Context, i int) *fwk.Status {
		st := framework.NewCycleState()
		st.Write(choiceKey, &choice{gpus: 1, share: 1000})
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("p%d", i), UID: types.UID(fmt.Sprint(i))}}
		return pl.Bind(ctx, st, p, "node-0")
	}
	var wg sync.WaitGroup
	for i := range maxBindsInFlight {
		wg.Go(func() {
			if s := bind(context.Background(), i); !s.IsSuccess() {
				t.Errorf("bind %d: %v", i, s.AsError())
			}
		})
	}
	for range maxBindsInFlight {
		<-arrived
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := bind(ctx, maxBindsInFlight)
	if s.IsSuccess() || !errors.Is(s.AsError(), context.Canceled) {
		t.Fatalf("bind %d with every slot taken and its context ended: %v, want context canceled", maxBindsInFlight, s.AsError())
	}
	if got := calls.Load(); got != maxBindsInFlight {
		t.Fatalf("%d binding requests with %d allowed in flight", got, maxBindsInFlight)
	}
	open.Store(true)
	close(gate)
	for i := range 100 {
		wg.Go(func() {
			if s := bind(context.Background(), 1000+i); !s.IsSuccess() {
				t.Errorf("bind %d: %v", 1000+i, s.AsError())
			}
		})
	}
	wg.Wait()
	if got := calls.Load(); got != maxBindsInFlight+100 {
		t.Errorf("%d binding requests, want %d", got, maxBindsInFlight+100)
	}
	if got := most.Load(); got != maxBindsInFlight {
		t.Errorf("at most %d binds in flight, want %d", got, maxBindsInFlight)
	}
}
