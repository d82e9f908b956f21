// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// runWithProgress runs w with cfg (engine.Run) and writes its progress to
// out while the runs go: on a terminal one line rewritten every second
// with runs done, total and the time left; elsewhere a line every 30 s
// (IsTerminal). A run that ends before the first line prints none.
func runWithProgress(ctx context.Context, w *engine.Workload, cfg engine.Config, out io.Writer) (*engine.Report, error) {
	var done, total atomic.Int64
	cfg.Progress = func(d, t int) {
		done.Store(int64(d))
		total.Store(int64(t))
	}
	start := time.Now()
	stop := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		progress(out, &done, &total, start, stop)
		close(progressDone)
	}()
	rep, err := engine.Run(ctx, w, cfg)
	close(stop)
	<-progressDone
	return rep, err
}

func progress(out io.Writer, done, total *atomic.Int64, start time.Time, stop chan struct{}) {
	tty := IsTerminal(out)
	every := 30 * time.Second // a pipe or CI log: a line now and then
	if tty {
		every = time.Second // a terminal: one line, rewritten
	}
	t := time.NewTicker(every)
	defer t.Stop()
	printed := false
	for {
		select {
		case <-stop:
			if printed {
				line := fmt.Sprintf("simulate: %d/%d runs done in %.1f s", done.Load(), total.Load(), time.Since(start).Seconds())
				if tty {
					line = "\r" + line + "\x1b[K"
				}
				fmt.Fprintln(out, line)
			}
			return
		case <-t.C:
			printed = true
			line := ProgressLine(int(done.Load()), int(total.Load()), time.Since(start))
			if tty {
				fmt.Fprint(out, "\r"+line+"\x1b[K") // back to the line's start, erase the rest
			} else {
				fmt.Fprintln(out, line)
			}
		}
	}
}

// ProgressLine is one progress report: runs done of total, the time so far
// and, once a run is done, an estimate of the time left at the pace so far:
// "simulate: 3/12 runs, 6 s, about 18 s left".
func ProgressLine(done, total int, elapsed time.Duration) string {
	line := fmt.Sprintf("simulate: %d/%d runs, %s", done, total, roundDuration(elapsed))
	if done > 0 && done < total {
		left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
		line += ", about " + roundDuration(left) + " left"
	}
	return line
}

// roundDuration writes d in whole seconds, or minutes and seconds from a
// minute: "6 s", "2 min 05 s".
func roundDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s < 60 {
		return fmt.Sprintf("%d s", s)
	}
	return fmt.Sprintf("%d min %02d s", s/60, s%60)
}

// IsTerminal reports whether w is a terminal (a character device), where
// progress rewrites one line; elsewhere (a pipe, a file, CI) it prints a
// line every 30 s. It needs no x/term: os.File.Stat's ModeCharDevice.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
