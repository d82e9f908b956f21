// Command gpuplane-scheduler is upstream kube-scheduler (v1.37) with
// gpuplane's GPUPlacement plugin registered, built the way
// sigs.k8s.io/scheduler-plugins builds its binary: every kube-scheduler
// flag, configuration field, metric and log works unchanged. See
// deploy/scheduler/config.yaml for the gpuplane profile.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/gpuplane/gpuplane/internal/scheduler"
)

func main() {
	cmd := app.NewSchedulerCommand(
		app.WithPlugin(scheduler.Name, scheduler.New),
		app.WithPlugin(scheduler.GangLocalityName, scheduler.NewGangLocality),
	)
	os.Exit(cli.Run(cmd))
}
