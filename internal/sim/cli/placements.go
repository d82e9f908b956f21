// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// jsonLines reports whether a --placements file name asks for JSON lines
// (.jsonl or .ndjson) rather than CSV.
func jsonLines(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	return ext == ".jsonl" || ext == ".ndjson"
}

// placementRow is one line of the --placements file: what became of one
// pod in one run of one policy and seed.
type placementRow struct {
	// Sharing is the --sharing mode of the run; only with --sharing.
	Sharing string `json:"sharing,omitempty"`
	Policy  string `json:"policy"`
	Seed    uint64 `json:"seed"`
	// Seq is the arrival number in the run, from 1.
	Seq int    `json:"seq"`
	Pod string `json:"pod"`
	// Node, GPUs (indices on the node) and GPUMilli (milli-GPU on each)
	// for a placed pod.
	Node     string `json:"node,omitempty"`
	GPUs     []int  `json:"gpus,omitempty"`
	GPUMilli int64  `json:"gpu_milli,omitempty"`
	// StartSeconds (replay): trace time it was placed; WaitSeconds
	// (replay): how long it waited, placed or not.
	StartSeconds *float64 `json:"start_seconds,omitempty"`
	WaitSeconds  *float64 `json:"wait_seconds,omitempty"`
	// FailedReason is a engine.Reason* constant for a pod that failed.
	FailedReason string `json:"failed_reason,omitempty"`
}

var placementHeader = []string{"policy", "seed", "seq", "pod", "node", "gpus", "gpu_milli", "start_seconds", "wait_seconds", "failed_reason"}

func optional(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// writePlacements writes one row per policy, seed and pod of the runs:
// CSV (GPU indices joined by '|', absent values empty), or JSON lines when
// jsonl. Runs of a --sharing mode (Result.Sharing set) get a first
// column, sharing, in every row.
func writePlacements(w io.Writer, runs []engine.Result, jsonl bool) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	enc := json.NewEncoder(bw)
	sharing := len(runs) > 0 && runs[0].Sharing != nil
	if !jsonl {
		head := placementHeader
		if sharing {
			head = append([]string{"sharing"}, head...)
		}
		if err := cw.Write(head); err != nil {
			return err
		}
	}
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for _, r := range runs {
		mode := ""
		if r.Sharing != nil {
			mode = r.Sharing.Sharing
		}
		for _, p := range r.Placements {
			row := placementRow{Sharing: mode, Policy: r.Policy, Seed: r.Seed, Seq: p.Seq, Pod: p.Pod, Node: p.Node, GPUMilli: p.GPUMilli,
				StartSeconds: optional(p.StartSeconds), WaitSeconds: optional(p.WaitSeconds), FailedReason: p.Reason}
			if p.Node != "" {
				row.GPUs = p.GPUs.Indices()
			}
			if jsonl {
				if err := enc.Encode(row); err != nil {
					return err
				}
				continue
			}
			gpus := make([]string, len(row.GPUs))
			for i, g := range row.GPUs {
				gpus[i] = strconv.Itoa(g)
			}
			milli := ""
			if p.Node != "" {
				milli = strconv.FormatInt(p.GPUMilli, 10)
			}
			rec := []string{r.Policy, strconv.FormatUint(r.Seed, 10), strconv.Itoa(p.Seq), p.Pod, p.Node,
				strings.Join(gpus, "|"), milli, num(row.StartSeconds), num(row.WaitSeconds), p.Reason}
			if sharing {
				rec = append([]string{mode}, rec...)
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// checkNewFile checks, before a run, that path can be written and, unless
// force, does not exist yet.
func checkNewFile(path string, force bool) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if _, err := os.Lstat(path); err == nil && !force {
		return fmt.Errorf("%s exists (--force overwrites it)", path)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".gpuplane-check-")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", filepath.Dir(path), err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// savePlacements writes the placements file through a temporary file in
// the same directory, renamed into place.
func savePlacements(path string, runs []engine.Result) error {
	return atomicfile.WriteFunc(path, 0o644, func(w io.Writer) error {
		if err := writePlacements(w, runs, jsonLines(path)); err != nil {
			return fmt.Errorf("--placements: %w", err)
		}
		return nil
	})
}
