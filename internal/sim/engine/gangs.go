// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

import (
	"container/heap"
	"math"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// Failure reasons of gang pods (replay with Config.Gangs).
const (
	// ReasonGangUnfit: another pod of the pod's gang fits no node of the
	// empty cluster, so the gang never starts (upstream's GangScheduling
	// binds a gang whole or not at all).
	ReasonGangUnfit = "gang_unfit"
	// ReasonGangIncomplete: a pod of the pod's gang was deleted while it
	// waited, so the gang never has all its pods.
	ReasonGangIncomplete = "gang_incomplete"
)

// gangQueue is the gang side of a replay: pods named NAME#0, NAME#1, ...
// (GangOf) start together, when all have arrived and all fit at once, as
// Kubernetes' GangScheduling places a PodGroup whose minCount is every pod
// of the job (internal/gang, gpuplane-webhook's rule); until then each
// waits, its wait counted from its own creation.
type gangQueue struct {
	of      []int   // pod's gang, -1 for none
	members [][]int // each gang's pods, in pod-list order
	arrived []int   // how many of each gang's pods have arrived
	dead    []string
	ready   []int  // gangs whose pods have all arrived, not started, in order
	waits   []bool // pod i waits with its gang
}

func newGangQueue(w *Workload) *gangQueue {
	gq := &gangQueue{of: make([]int, len(w.specs)), waits: make([]bool, len(w.specs))}
	byName := map[string]int{}
	for i := range w.specs {
		gq.of[i] = -1
		g := GangOf(w.specs[i].Name)
		if g == "" {
			continue
		}
		k, ok := byName[g]
		if !ok {
			k = len(gq.members)
			byName[g] = k
			gq.members = append(gq.members, nil)
		}
		gq.of[i] = k
		gq.members[k] = append(gq.members[k], i)
	}
	// A gang of one pod is a pod.
	for _, m := range gq.members {
		if len(m) == 1 {
			gq.of[m[0]] = -1
		}
	}
	gq.arrived, gq.dead = make([]int, len(gq.members)), make([]string, len(gq.members))
	return gq
}

// inGang is whether pod i starts with a gang.
func (rp *replayer) inGang(i int) bool { return rp.gq != nil && rp.gq.of[i] >= 0 }

// gangArrival is the arrival of pod i of a gang: it waits with its gang,
// which starts when all its pods are there and fit. A pod that fits no
// node of the empty cluster fails, and its gang with it.
func (rp *replayer) gangArrival(i int) error {
	gq := rp.gq
	g := gq.of[i]
	gq.arrived[g]++
	if gq.dead[g] != "" {
		rp.fail(i, gq.dead[g])
		return nil
	}
	if r := rp.w.unfit[i]; r != "" {
		rp.fail(i, r)
		rp.killGang(g, ReasonGangUnfit)
		return nil
	}
	gq.waits[i] = true
	if del := rp.w.specs[i].Deletion; !math.IsNaN(del) {
		heap.Push(&rp.expiries, departure{at: del, pod: i})
	}
	if gq.arrived[g] == len(gq.members[g]) {
		gq.ready = append(gq.ready, g)
		return rp.retryGangs()
	}
	return nil
}

// killGang fails the waiting pods of gang g for reason; its pods yet to
// arrive fail on arrival.
func (rp *replayer) killGang(g int, reason string) {
	gq := rp.gq
	gq.dead[g] = reason
	for _, j := range gq.members[g] {
		if gq.waits[j] {
			gq.waits[j] = false
			rp.fail(j, reason)
		}
	}
	for k, r := range gq.ready {
		if r == g {
			gq.ready = append(gq.ready[:k], gq.ready[k+1:]...)
			break
		}
	}
}

// gangExpire is the deletion time of pod i while it waits with its gang:
// it leaves, and its gang can no longer start.
func (rp *replayer) gangExpire(e departure) {
	rp.advance(e.at)
	rp.gq.waits[e.pod] = false
	rp.fail(e.pod, ReasonDeleted)
	rp.killGang(rp.gq.of[e.pod], ReasonGangIncomplete)
	rp.sample()
}

// retryGangs starts the ready gangs, oldest first, that fit now whole.
func (rp *replayer) retryGangs() error {
	kept := rp.gq.ready[:0]
	for _, g := range rp.gq.ready {
		ok, err := rp.startGang(g)
		if err != nil {
			return err
		}
		if !ok {
			kept = append(kept, g)
		}
	}
	rp.gq.ready = kept
	return nil
}

// startGang places gang g's pods one by one, in pod-list order, as the
// scheduler places a gang's pods in turn; if one does not fit, those
// placed are taken back and it returns false.
func (rp *replayer) startGang(g int) (bool, error) {
	type choice struct {
		node int
		gpus cluster.GPUSet
	}
	members := rp.gq.members[g]
	chosen := make([]choice, 0, len(members))
	undo := func() error {
		for k := len(chosen) - 1; k >= 0; k-- {
			if _, err := release(rp.pl, rp.c, chosen[k].node, &rp.pods[members[k]], chosen[k].gpus); err != nil {
				return err
			}
		}
		return nil
	}
	for _, i := range members {
		node, gpus, ok := rp.pl.Place(rp.c, &rp.pods[i])
		if !ok {
			return false, undo()
		}
		if _, err := allocate(rp.pl, rp.c, node, &rp.pods[i], gpus); err != nil {
			return false, err
		}
		chosen = append(chosen, choice{node, gpus})
	}
	// All fit: take the trial back and start them for real (the meter,
	// fragmentation, waits and departures of start).
	if err := undo(); err != nil {
		return false, err
	}
	for k, i := range members {
		rp.gq.waits[i] = false
		if err := rp.start(i, chosen[k].node, chosen[k].gpus); err != nil {
			return false, err
		}
	}
	return true, nil
}

// failGangsWaiting fails, at the end, the pods still waiting with their
// gang: all there but no room (ReasonNoRoom), or some never arrived.
func (rp *replayer) failGangsWaiting() {
	for i, w := range rp.gq.waits {
		if w {
			rp.fail(i, ReasonNoRoom)
		}
	}
}
