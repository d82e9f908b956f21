// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/gpuplane/gpuplane/internal/quota"
	"github.com/gpuplane/gpuplane/internal/sim/cli"
)

const quotaDoc = `quota turns a teams file into Kueue objects (kueue.x-k8s.io/v1beta2):
one ResourceFlavor per GPU model, one ClusterQueue per team in one Cohort,
a LocalQueue and a ResourceQuota in each team namespace (docs/quota.md).
It refuses a plan whose nominal quotas exceed the cluster's GPUs of a model.

The ClusterQueues cover nvidia.com/gpu, and amd.com/gpu and habana.ai/gaudi
where the teams file names AMD Instinct or Intel Gaudi models (their
flavors select amd.com/gpu.product-name and gpuplane.io/gpu.model): Kueue
admits their workloads
only with resources.excludeResourcePrefixes in its Configuration leaving
cpu, memory, ephemeral-storage and hugepages- out of quota; --kueue-config
writes that Configuration (docs/quota.md).

--gpu-api dra (default device-plugin) is for clusters serving GPUs through
DRA: the Configuration then also turns on Kueue's DRA feature gates and
maps DeviceClass gpu.nvidia.com to nvidia.com/gpu, so GPUs claimed through
ResourceClaimTemplates take the same quota as nvidia.com/gpu requests;
each ResourceQuota also caps the namespace's claimed gpu.nvidia.com
devices. Kueue v0.17.0 counts whole devices: MIG claims (a CEL selector)
are refused by Kueue and a share counts as a whole GPU (docs/quota.md).

--nodes takes what gpuplane simulate --nodes takes: an openb node list CSV
(sn,cpu_milli,memory_mib,gpu,model), a cluster YAML file or a short spec
such as 'T4 x 200'; docs/quota.md shows how to write the CSV from a cluster
with kubectl.

Usage: gpuplane quota --teams teams.yaml --nodes nodes.csv > kueue.yaml

Flags:
`

// runQuota runs gpuplane quota with args, writing the YAML to stdout.
func runQuota(args []string, stdout, stderr io.Writer) error {
	c, f := newQuotaCmd()
	teamsFile, nodesFile, kubeconfig, kueueConfig, gpuAPI := f.teams, f.nodes, f.kubeconfig, f.kueueConfig, f.gpuAPI
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	conf, err := quota.KueueConfigFor(*gpuAPI)
	if err != nil {
		return cli.BadInput(fmt.Errorf("quota: --gpu-api: %w", err))
	}
	objs, err := quotaPlan(c, *teamsFile, *nodesFile, *kubeconfig, *gpuAPI)
	if err != nil {
		return cli.BadInput(err)
	}
	if *kueueConfig != "" {
		var buf bytes.Buffer
		if err := quota.WriteYAML(&buf, []any{conf}); err != nil {
			return err
		}
		// A new file only: the path may be the teams file or Kueue's own
		// configuration, which the output is to be merged into.
		f, err := os.OpenFile(*kueueConfig, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			return cli.BadInput(fmt.Errorf("quota: --kueue-config %s exists: not overwritten (give a new path)", *kueueConfig))
		}
		if err != nil {
			return fmt.Errorf("quota: --kueue-config: %w", err)
		}
		_, err = f.Write(buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("quota: --kueue-config: %w", err)
		}
	}
	return quota.WriteYAML(stdout, objs)
}

// quotaPlan checks quota's arguments and reads its inputs into the Kueue
// objects; every error is bad input.
func quotaPlan(c *command, teamsFile, nodesFile, kubeconfig, gpuAPI string) ([]any, error) {
	switch {
	case c.fs.NArg() > 0:
		return nil, fmt.Errorf("quota takes no arguments, got %q", c.fs.Args())
	case kubeconfig != "":
		return nil, errors.New("quota: --kubeconfig is not supported (the offline tool links no Kubernetes client); write the node list with kubectl as docs/quota.md shows and pass --nodes")
	case teamsFile == "" || nodesFile == "":
		return nil, errors.New("quota: --teams and --nodes are required")
	}
	nodes, err := cli.ReadNodes(nodesFile)
	if err != nil {
		return nil, err
	}
	teams, err := quota.LoadTeamsOn(teamsFile, nodes) // as simulate --teams reads it
	if err != nil {
		return nil, err
	}
	return quota.PlanFor(teamsFile, teams, quota.Capacity(nodes), gpuAPI)
}

// quotaFlags are the values of gpuplane quota's flags.
type quotaFlags struct {
	teams, nodes, kubeconfig, kueueConfig, gpuAPI *string
}

// newQuotaCmd returns the quota command and its flags' values.
func newQuotaCmd() (*command, quotaFlags) {
	c := newCommand("gpuplane quota", quotaDoc)
	f := c.fs
	c.args["teams"], c.args["nodes"], c.args["kubeconfig"], c.args["kueue-config"], c.args["gpu-api"] = "FILE", "NODES", "FILE", "FILE", "API"
	return c, quotaFlags{
		teams:       f.String("teams", "", "teams file (YAML, docs/quota.md)"),
		nodes:       f.String("nodes", "", "node list: openb CSV, cluster YAML (.yaml, .yml) or a spec 'MODEL x COUNT, ...'"),
		kubeconfig:  f.String("kubeconfig", "", "not supported: gpuplane links no Kubernetes client; write --nodes with kubectl (docs/quota.md)"),
		kueueConfig: f.String("kueue-config", "", "also write the Kueue Configuration the objects need (resources.excludeResourcePrefixes; under dra its DRA gates and deviceClassMappings) to FILE"),
		gpuAPI:      f.String("gpu-api", quota.DevicePlugin, "how the cluster serves GPUs: device-plugin or dra (Kueue's DRA form)"),
	}
}
