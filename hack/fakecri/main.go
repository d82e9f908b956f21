// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command fakecri serves a fake container runtime for a real kubelet
// (internal/testenv/kube/cri): every image is accepted, every container
// "runs" without running anything, and each CreateContainer request is
// written as a JSON file in --record-dir (env, devices, mounts, CDI
// devices, annotations, the pod's namespace and name):
//
//	go run ./hack/fakecri --socket /tmp/fakecri.sock --record-dir /tmp/fakecri
//	kubelet --config ... # containerRuntimeEndpoint: unix:///tmp/fakecri.sock
//
// It runs until SIGTERM or SIGINT, then removes the socket; the records
// stay.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/gpuplane/gpuplane/internal/testenv/kube/cri"
)

func main() {
	socket := flag.String("socket", "/tmp/fakecri.sock", "unix socket to serve the CRI runtime and image services on")
	records := flag.String("record-dir", "fakecri-records", "directory for one JSON file per CreateContainer")
	flag.Parse()
	r, err := cri.Start(*socket, *records)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakecri:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "fakecri: serving %s, records in %s\n", r.Endpoint(), r.RecordDir())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	r.Stop()
}
