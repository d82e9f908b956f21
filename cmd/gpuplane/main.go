// Command gpuplane is the GPU control plane for Kubernetes: one binary with a
// subcommand per role (simulate, node-agent, scheduler, webhook, cost).
//
// This file wires the command line only; each role's logic lives under
// internal/. Each subcommand registers itself from its own file's init.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

var rootCmd = &cobra.Command{
	Use:           "gpuplane",
	Short:         "GPU control plane for Kubernetes",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "gpuplane: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "gpuplane:", err)
		os.Exit(1)
	}
}
