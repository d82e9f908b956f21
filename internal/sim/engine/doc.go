// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package engine is gpuplane's simulation engine: it replays a workload on a
// modelled cluster through the placement core (internal/placement) and
// measures GPU allocation ratio, fragmentation, queueing delay and cost,
// for several policies and seeds at once.
//
// Two experiments:
//   - fill, the method of Weng et al. (USENIX ATC 2023): the trace's pods
//     in random order, then pods sampled from it uniformly with replacement,
//     until the arrived GPU demand reaches Inflate × capacity; pods never
//     leave; a pod that fits nowhere fails and the run goes on.
//   - replay: a discrete-event replay in trace time (see replay.go).
package engine
