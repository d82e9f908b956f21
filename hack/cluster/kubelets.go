// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	gpuresource "github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/testenv/kube"
)

// kubeletNode is a real kubelet node (kube.StartKubeletNode) with a
// gpuplane-node-agent on a mock profile serving its device plugin.
type kubeletNode struct {
	k     *kube.KubeletNode
	agent *exec.Cmd
	done  chan struct{}
}

// startKubeletNodes starts kl.n kubelet nodes named kubelet-<i>, each
// with a node agent (mock backend, the built-in or file profile kl.profile)
// labelling its Node. With kl.api device-plugin the agent serves the
// kubelet's device-plugin directory and follows gpuplane-scheduler's
// choices, and it returns once every Node shows nvidia.com/gpu
// allocatable; with dra it is the node's DRA driver (agentArgs), and it
// returns once every Node has ResourceSlices. stop stops the agents, then
// the kubelets.
func startKubeletNodes(ctx context.Context, c *kube.Cluster, dir string, kl kubeletSpec, grace time.Duration) (stop func(), err error) {
	var nodes []*kubeletNode
	stop = func() {
		for _, kn := range nodes {
			if kn.agent != nil {
				_ = kn.agent.Process.Signal(syscall.SIGTERM)
				select {
				case <-kn.done:
				case <-time.After(grace):
					_ = kn.agent.Process.Kill()
					<-kn.done
				}
			}
			if err := kn.k.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	for i := range kl.n {
		name := fmt.Sprintf("kubelet-%d", i)
		k, err := c.StartKubeletNode(ctx, name, kube.KubeletOptions{})
		if err != nil {
			return stop, fmt.Errorf("kubelet node %s: %w", name, err)
		}
		kn := &kubeletNode{k: k, done: make(chan struct{})}
		nodes = append(nodes, kn)
		logf, err := os.Create(filepath.Join(dir, name+"-agent.log"))
		if err != nil {
			return stop, err
		}
		cmd := exec.Command(kl.agent, agentArgs(kl, k, c.Kubeconfig)...)
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			logf.Close()
			return stop, err
		}
		kn.agent = cmd
		go func() { _ = cmd.Wait(); logf.Close(); close(kn.done) }()
		fmt.Printf("%s: kubelet node %s: kubelet pid %d (log %s), node agent pid %d (log %s)\n",
			time.Now().Format(time.RFC3339), name, k.Pid(), k.Log, cmd.Process.Pid, logf.Name())
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, kn := range nodes {
		for {
			if served(ctx, c, kl.api, kn.k.Name) {
				break
			}
			select {
			case <-kn.done:
				return stop, fmt.Errorf("the node agent of %s exited (log %s)", kn.k.Name, filepath.Join(dir, kn.k.Name+"-agent.log"))
			case <-kn.k.Exited():
				return stop, fmt.Errorf("the kubelet of %s exited (log %s)", kn.k.Name, kn.k.Log)
			case <-ctx.Done():
				return stop, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return stop, fmt.Errorf("%s: GPUs not served (%s) after 2 minutes (agent log %s)", kn.k.Name, kl.api, filepath.Join(dir, kn.k.Name+"-agent.log"))
			}
		}
	}
	return stop, nil
}

// agentArgs are the node agent's arguments on kubelet node k.
func agentArgs(kl kubeletSpec, k *kube.KubeletNode, kubeconfig string) []string {
	args := []string{"--backend", "mock", "--mock-profile", kl.profile, "--pod-resources-socket", k.PodResourcesSocket,
		"--node-name", k.Name, "--kubeconfig", kubeconfig, "--label-node", "--metrics-addr", "127.0.0.1:0"}
	if kl.api != gpuAPIDRA {
		return append(args, "--device-plugin-dir", k.DevicePluginDir, "--scheduler-choice")
	}
	// The kubelet's plugin directories under its --root-dir; the CDI
	// specs in the node's directory (the fake runtime records the CDI
	// device names, it reads no spec); the MIG devices made kept past an
	// agent restart.
	return append(args, "--kubelet-api=dra",
		"--dra-plugin-dir", filepath.Join(k.RootDir, "plugins", apidra.DriverName),
		"--dra-registrar-dir", filepath.Join(k.RootDir, "plugins_registry"),
		"--cdi-dir", filepath.Join(k.Dir, "cdi"),
		"--mock-mig-state", filepath.Join(k.Dir, "mig-state.json"))
}

// served reports whether node's GPUs are served: nvidia.com/gpu
// allocatable (device-plugin), or ResourceSlices of the node (dra).
func served(ctx context.Context, c *kube.Cluster, api, node string) bool {
	if api == gpuAPIDRA {
		l, err := c.Client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: resourcev1.ResourceSliceSelectorNodeName + "=" + node})
		return err == nil && len(l.Items) > 0
	}
	n, err := c.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false
	}
	q := n.Status.Allocatable[gpuresource.GPU]
	return q.Value() > 0
}
