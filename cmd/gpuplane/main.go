// Command gpuplane is gpuplane's offline tool, the one a user runs on a
// laptop: simulate (internal/simulate) and version. It links no cgo,
// Kubernetes client, gRPC or Prometheus library, so it builds in seconds;
// the in-cluster roles are separate binaries (cmd/gpuplane-node-agent).
//
// This file wires the command line only.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gpuplane/gpuplane/internal/version"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "gpuplane: interrupted")
			os.Exit(130)
		}
		fmt.Fprintln(os.Stderr, "gpuplane:", err)
		os.Exit(1)
	}
}

// newRootCmd returns the gpuplane command with its subcommands.
func newRootCmd() *cobra.Command {
	v := version.Get().String("gpuplane")
	root := &cobra.Command{
		Use:           "gpuplane",
		Short:         "GPU platform for Kubernetes: offline tools (simulate)",
		Version:       v,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newSimulateCmd(), &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  cobra.NoArgs,
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), v) },
	})
	return root
}
