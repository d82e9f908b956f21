// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpuplane-webhook is the GPU admission webhook: it serves
// gpuplane's GPU policy (internal/webhook/policy) to the API server as a mutating
// and a validating admission webhook (internal/webhook). This file wires
// the command line only.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/gpuplane/gpuplane/internal/version"
	"github.com/gpuplane/gpuplane/internal/webhook"
)

const name = "gpuplane-webhook"

func main() {
	if err := newWebhookCmd().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

func newWebhookCmd() *cobra.Command {
	o := webhook.DefaultOptions()
	cmd := &cobra.Command{
		Use:   name,
		Short: "GPU admission policies: mutating and validating admission webhook",
		Long: `gpuplane-webhook applies a GPUPolicy file to pods as they are created:
it adds the GPU nodes' toleration, the team's schedulerName and team label
to GPU pods (/mutate), and refuses pods and workload pod templates that
break the policy (/validate). It serves TLS only, reloads its certificate
files when they change, and exits cleanly on SIGTERM or SIGINT. See
docs/webhook.md.`,
		Version:       version.Get().String(name),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return webhook.Run(ctx, o)
		},
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
	f := cmd.Flags()
	f.StringVar(&o.PolicyFile, "policy", o.PolicyFile, "GPUPolicy file (YAML, apiVersion gpuplane.io/v1alpha1; see docs/webhook.md)")
	f.StringVar(&o.CertFile, "tls-cert-file", o.CertFile, "serving certificate, PEM (tls.crt of a cert-manager Secret); read again when it changes")
	f.StringVar(&o.KeyFile, "tls-key-file", o.KeyFile, "serving key, PEM (tls.key of a cert-manager Secret)")
	f.StringVar(&o.Addr, "listen", o.Addr, "address to serve /mutate, /validate and /healthz on, TLS only")
	f.StringVar(&o.MetricsAddr, "metrics-addr", o.MetricsAddr, "address to serve Prometheus /metrics and /healthz on, plain HTTP; empty: none")
	f.DurationVar(&o.Limits.ReadHeaderTimeout, "read-header-timeout", o.Limits.ReadHeaderTimeout, "longest time to read a request's headers (and the TLS handshake); 0: no limit")
	f.DurationVar(&o.Limits.ReadTimeout, "read-timeout", o.Limits.ReadTimeout, "longest time to read a whole request, body included: a client that sends it slower is disconnected; 0: no limit")
	f.DurationVar(&o.Limits.WriteTimeout, "write-timeout", o.Limits.WriteTimeout, "longest time from the end of a request's headers to the end of its answer; 0: no limit")
	f.DurationVar(&o.Limits.IdleTimeout, "idle-timeout", o.Limits.IdleTimeout, "longest time a kept-alive connection waits for its next request; 0: the read timeout")
	f.IntVar(&o.Limits.MaxConns, "max-connections", o.Limits.MaxConns, "most connections served at once (each port); more wait to be accepted; 0: no limit")
	f.Int64Var(&o.MaxRequestBytes, "max-request-bytes", o.MaxRequestBytes, "largest AdmissionReview body, in bytes; a larger one is answered 413. 7 MiB, as controller-runtime: two objects of the API server's 3 MiB and 1 MiB more")
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file, to read namespaces' labels and training jobs' owners and write their gangs (default: in-cluster credentials)")
	f.BoolVar(&o.Gangs, "gangs", o.Gangs, "give the pods of PyTorchJobs, MPIJobs, TrainJobs, JobSets, RayCluster worker groups and indexed Jobs their gang's Workload and PodGroup (scheduling.k8s.io/v1beta1; opt out with label gpuplane.io/gang=false on the namespace, job or pod; docs/scheduler.md)")
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	f.AddGoFlagSet(klogFlags)
	return cmd
}
