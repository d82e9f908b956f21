// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpuplane-scheduler is upstream kube-scheduler (v1.37) with
// gpuplane's GPUPlacement and GangLocality plugins registered, built the way
// sigs.k8s.io/scheduler-plugins builds its binary: every kube-scheduler
// flag, configuration field, metric and log works unchanged. See
// deploy/scheduler/config.yaml for the gpuplane profile and
// docs/scheduler.md.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/gpuplane/gpuplane/internal/scheduler"
	"github.com/gpuplane/gpuplane/internal/version"
)

const name = "gpuplane-scheduler"

func main() {
	// --version prints gpuplane's build and the kube-scheduler it embeds;
	// kube-scheduler's own --version=raw still works.
	if len(os.Args) == 2 && (os.Args[1] == "--version" || os.Args[1] == "--version=true") {
		fmt.Println(version.Get().String(name))
		fmt.Println("kube-scheduler", kubernetesVersion())
		return
	}
	cmd := app.NewSchedulerCommand(
		app.WithPlugin(scheduler.Name, scheduler.New),
		app.WithPlugin(scheduler.GangLocalityName, scheduler.NewGangLocality),
	)
	os.Exit(cli.Run(cmd))
}

// kubernetesVersion is the k8s.io/kubernetes module version linked in.
func kubernetesVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/kubernetes" {
				return d.Version
			}
		}
	}
	return "unknown"
}
