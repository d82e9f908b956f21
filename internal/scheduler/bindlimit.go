// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package scheduler

import "context"

// maxBindsInFlight is how many GPU pods GPUPlacement binds at once.
//
// kube-apiserver v1.37.2 lets a client open 100 HTTP/2 streams on a
// connection (k8s.io/apiserver pkg/server/secure_serving.go: without
// --http2-max-streams-per-connection, MaxConcurrentStreams = 100), and
// client-go's transport (net/http with golang.org/x/net/http2's
// ConfigureTransports, StrictMaxConcurrentStreams unset) dials a new TLS
// connection for each request over that limit, most of them closed again
// at once (x/net/http2 transport.go idleStateLocked, addConnIfNeeded).
// kube-scheduler runs each binding cycle in its own goroutine, unbounded
// (its APIDispatcher too, pkg/scheduler/backend/api_dispatcher), so when
// the scheduling cycle is fast and the API server slow, binds pile up past
// the limit and the scheduler spends its CPU, and the API server its
// accept queue, on TLS handshakes (measured in docs/scheduler.md,
// "Measured"). 64 leaves the scheduler's watches, events and lease their
// streams on the one connection; at a 50 ms binding it still allows 1,280
// binds a second.
const maxBindsInFlight = 64

// bindSlots bounds the binds in flight: acquire blocks while
// maxBindsInFlight binds are under way, and fails when ctx ends first.
type bindSlots chan struct{}

func newBindSlots(n int) bindSlots { return make(bindSlots, n) }

// acquire takes a slot; the caller must release it. It returns ctx's
// error when ctx ends before a slot is free.
// A nil bindSlots does not bound.
func (s bindSlots) acquire(ctx context.Context) error {
	if s == nil {
		return nil
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release frees a slot taken by acquire.
func (s bindSlots) release() {
	if s != nil {
		<-s
	}
}
