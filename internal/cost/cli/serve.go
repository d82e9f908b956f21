// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/export"
	"github.com/gpuplane/gpuplane/internal/cost/source"
)

// serve runs --serve: it listens on o.Serve, says the bound address on
// stderr, and serves internal/cost/export's cost rates over the trailing
// o.ServeWindow, read from Prometheus and attributed as the report is
// (attr), refreshed now and every o.ServeRefresh, until ctx ends. A failed
// refresh is a warning on stderr; the last good figures stay published.
func serve(ctx context.Context, o Options, attr func(context.Context, *source.Result) error, stderr io.Writer) error {
	step := o.Step.Milliseconds()
	if step == 0 {
		step = source.DefaultStep
	}
	src := func(ctx context.Context, from, to time.Time) (alloc.Input, error) {
		res, err := source.ReadPrometheus(ctx, o.Prometheus, source.Window{From: from.UnixMilli(), To: to.UnixMilli(), Step: step})
		if err != nil {
			return alloc.Input{}, err
		}
		if err := attr(ctx, res); err != nil {
			return alloc.Input{}, err
		}
		return res.Input, nil
	}
	ln, err := net.Listen("tcp", o.Serve)
	if err != nil {
		return fmt.Errorf("--serve: %w", err)
	}
	fmt.Fprintf(stderr, "serving cost rates on http://%s/metrics\n", ln.Addr())
	e := export.New(src, o.ServeWindow)
	e.Now = o.now
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	refreshed := make(chan struct{})
	go func() {
		defer close(refreshed)
		e.Run(ctx, o.ServeRefresh, func(err error) { fmt.Fprintf(stderr, "warning: refresh: %v\n", err) })
	}()
	err = e.Serve(ctx, ln)
	cancel()
	<-refreshed
	return err
}
