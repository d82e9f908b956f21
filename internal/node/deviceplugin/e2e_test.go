// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package deviceplugin_test

// End-to-end tests: the real gpuplane-node-agent binary, built once in
// TestMain, runs with "--backend mock" against a test kubelet (kubelettest)
// on unix sockets in a temporary directory.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
	"github.com/gpuplane/gpuplane/internal/node/deviceplugin/kubelettest"
)

var agentBin string

func TestMain(m *testing.M) {
	os.Exit(func() int {
		dir, err := os.MkdirTemp("", "gpuplane-e2e")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		agentBin = filepath.Join(dir, "gpuplane-node-agent")
		out, err := exec.Command("go", "build", "-o", agentBin, "github.com/gpuplane/gpuplane/cmd/gpuplane-node-agent").CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "building gpuplane-node-agent: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}())
}

// agent is a running gpuplane-node-agent.
type agent struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
	// ctx ends when the agent exits (its cause says how) or after 90 s:
	// every wait on the agent's work uses it, so none outlives the agent.
	ctx context.Context
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startAgent starts the agent with the mock backend on dir, without a
// metrics endpoint unless args give --metrics-addr (so no test binds a
// fixed port).
func startAgent(t *testing.T, dir string, args ...string) *agent {
	t.Helper()
	a := &agent{out: &syncBuffer{}, done: make(chan error, 1)}
	a.cmd = exec.Command(agentBin, append([]string{"--backend", "mock", "--device-plugin-dir", dir, "--metrics-addr="}, args...)...)
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, exited := context.WithCancelCause(context.Background())
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	a.ctx = ctx
	go func() {
		err := a.cmd.Wait()
		exited(fmt.Errorf("agent exited: %v", err))
		a.done <- err
	}()
	t.Cleanup(func() {
		_ = a.cmd.Process.Kill()
		<-a.done
		if t.Failed() {
			t.Logf("agent output:\n%s", a.out)
		}
	})
	return a
}

// stop sends SIGTERM and waits for a clean exit.
func (a *agent) stop(t *testing.T) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		a.done <- err
		if err != nil {
			t.Fatalf("agent exited with %v after SIGTERM:\n%s", err, a.out)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not exit after SIGTERM")
	}
}

// wait waits for the agent to exit by itself and returns its error.
func (a *agent) wait(t *testing.T) error {
	select {
	case err := <-a.done:
		a.done <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("agent did not exit")
		return nil
	}
}

func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "dp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func startKubelet(t *testing.T, dir string) *kubelettest.Kubelet {
	t.Helper()
	k, err := kubelettest.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	return k
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func discover(t *testing.T, profile string) device.Node {
	t.Helper()
	n, err := mock.Discover(profile)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p+".tmp", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitResources(t *testing.T, ctx context.Context, k *kubelettest.Kubelet, want []string) {
	t.Helper()
	sort.Strings(want)
	var got []string
	err := k.Wait(ctx, func(k *kubelettest.Kubelet) bool {
		got = k.ResourcesLocked()
		sort.Strings(got)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			return false
		}
		for _, r := range want {
			if k.PluginLocked(r).DevicesLocked() == nil {
				return false
			}
		}
		return true
	})
	if err != nil {
		t.Fatalf("registered resources %v, want %v: %v", got, want, err)
	}
}

// ids returns the device IDs in a ListAndWatch list, and whether all are
// healthy.
func ids(devs []*pluginapi.Device) ([]string, bool) {
	var out []string
	healthy := true
	for _, d := range devs {
		out = append(out, d.ID)
		healthy = healthy && d.Health == pluginapi.Healthy
	}
	return out, healthy
}

func TestE2ERegistration(t *testing.T) {
	migSingle := `name: a100-single
gpus:
  - count: 2
    productName: NVIDIA A100-SXM4-80GB
    mig: [1g.10gb, 1g.10gb, 1g.10gb]
`
	migMedia := `name: a100-me
gpus:
  - productName: NVIDIA A100-SXM4-80GB
    mig: [1g.10gb+me, 3g.40gb]
  - productName: NVIDIA A100-SXM4-40GB
    mig: [{profile: 7g.40gb, computeInstances: [1, 1, 1, 1, 1, 1, 1]}]
`
	for _, tc := range []struct {
		profile, strategy string
		// want maps resources to the device IDs they list, built from the
		// node: "gpus" for whole GPUs, "mig:<profile>" for MIG devices.
		want map[string]string
	}{
		{"dgx-h100", "none", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx-h100", "single", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx-h100", "mixed", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx1-v100", "none", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx1-v100", "single", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx1-v100", "mixed", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"l40s-pcie-4", "none", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"l40s-pcie-4", "single", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"l40s-pcie-4", "mixed", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx-a100-80gb-mig", "none", map[string]string{"nvidia.com/gpu": "gpus"}},
		{"dgx-a100-80gb-mig", "mixed", map[string]string{"nvidia.com/gpu": "gpus-nomig", "nvidia.com/mig-1g.10gb": "mig:1g.10gb", "nvidia.com/mig-2g.20gb": "mig:2g.20gb", "nvidia.com/mig-3g.40gb": "mig:3g.40gb"}},
		{"FILE", "single", map[string]string{"nvidia.com/gpu": "mig:1g.10gb"}},
		// The media-extension profile under the name NVIDIA's plugin gives it
		// (k8s-device-plugin internal/rm/rm.go: "+" to "."); the seven
		// 1c.7g.40gb devices get no resource (TestBuildResourcesMIGNames).
		{"FILE-ME", "mixed", map[string]string{"nvidia.com/mig-1g.10gb.me": "mig:1g.10gb+me", "nvidia.com/mig-3g.40gb": "mig:3g.40gb"}},
	} {
		t.Run(tc.profile+"/"+tc.strategy, func(t *testing.T) {
			dir := shortDir(t)
			k := startKubelet(t, dir)
			profile := tc.profile
			switch profile {
			case "FILE":
				profile = writeFile(t, dir, "profile.yaml", migSingle)
			case "FILE-ME":
				profile = writeFile(t, dir, "profile.yaml", migMedia)
			}
			cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {migStrategy: "+tc.strategy+"}\n")
			a := startAgent(t, dir, "--mock-profile", profile, "--config", cfg)
			ctx := a.ctx
			var names []string
			for r := range tc.want {
				names = append(names, r)
			}
			waitResources(t, ctx, k, names)
			n := discover(t, profile)
			for r, what := range tc.want {
				var want []string
				for _, g := range n.GPUs {
					switch {
					case what == "gpus", what == "gpus-nomig" && !g.MIGEnabled:
						want = append(want, g.UUID)
					case strings.HasPrefix(what, "mig:"):
						for _, m := range g.MIG {
							if m.Profile == what[4:] {
								want = append(want, m.UUID)
							}
						}
					}
				}
				p, err := k.Plugin(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				got, healthy := ids(p.Devices())
				if strings.Join(got, ",") != strings.Join(want, ",") || !healthy {
					t.Errorf("%s lists %v (healthy %v), want %v", r, got, healthy, want)
				}
				for _, d := range p.Devices() {
					g, _, _ := n.GPUByUUID(d.ID)
					if d.Topology == nil || len(d.Topology.Nodes) != 1 || d.Topology.Nodes[0].ID != int64(g.NUMANode) {
						t.Errorf("%s device %s: topology %v, want NUMA node %d", r, d.ID, d.Topology, g.NUMANode)
					}
				}
				if p.Request.Version != "v1beta1" || !p.Request.Options.GetPreferredAllocationAvailable {
					t.Errorf("%s registration request %v", r, p.Request)
				}
			}
			// Every server's socket exists before any registration: no
			// resource beyond those wanted.
			if socks, _ := filepath.Glob(filepath.Join(dir, "gpuplane-*.sock")); len(socks) != len(tc.want) {
				t.Errorf("sockets %v, want %d", socks, len(tc.want))
			}
			a.stop(t)
			socks, _ := filepath.Glob(filepath.Join(dir, "gpuplane-*.sock"))
			if len(socks) != 0 {
				t.Errorf("sockets left after SIGTERM: %v", socks)
			}
		})
	}
}

func TestE2ERefusesBadSetup(t *testing.T) {
	_, err := os.Stat("/dev/nvidiactl")
	haveGPU := err == nil
	for _, tc := range []struct {
		name, profile, config, want string
		args                        []string
	}{
		{"nvml without driver", "dgx-h100", "version: v1\n", "NVML library (libnvidia-ml.so.1) not found", []string{"--backend", "nvml"}},
		{"labels file in a missing directory", "dgx-h100", "version: v1\n", "labels file", []string{"--labels-file", "/nonexistent/dir/f"}},
		{"unknown config field", "dgx-h100", "version: v1\nflags: {migStrategy: none, renameByDefault: true}\n", "config.yaml:2: flags.renameByDefault: unknown field; it belongs under sharing.mps or sharing.timeSlicing", nil},
		{"bad replicas", "dgx-h100", "version: v1\nsharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: -2}]}}\n", "sharing.timeSlicing.resources[0].replicas", nil},
		{"bad profile", "BADPROFILE", "version: v1\n", "gpus[0].numaNode", nil},
		{"kubeconfig without node name", "dgx-h100", "version: v1\n", "--kubeconfig needs --node-name", []string{"--kubeconfig", "/nonexistent/kubeconfig", "--node-name="}},
		{"missing kubeconfig", "dgx-h100", "version: v1\n", "--kubeconfig: ", []string{"--kubeconfig", "/nonexistent/kubeconfig", "--node-name", "n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if haveGPU && tc.args != nil && tc.args[0] == "--backend" {
				t.Skip("this machine has a GPU")
			}
			dir := shortDir(t)
			k := startKubelet(t, dir)
			cfg := writeFile(t, dir, "config.yaml", tc.config)
			profile := tc.profile
			if profile == "BADPROFILE" {
				profile = writeFile(t, dir, "profile.yaml", "gpus: [{productName: L4, numaNode: -7}]\n")
			}
			a := startAgent(t, dir, append([]string{"--mock-profile", profile, "--config", cfg}, tc.args...)...)
			if err := a.wait(t); err == nil {
				t.Fatal("agent started")
			}
			if out := a.out.String(); !strings.Contains(out, tc.want) {
				t.Errorf("output %q does not contain %q", out, tc.want)
			}
			socks, _ := filepath.Glob(filepath.Join(dir, "gpuplane-*.sock"))
			if len(socks) != 0 || len(k.Registrations()) != 0 {
				t.Errorf("half-started: sockets %v, registrations %d", socks, len(k.Registrations()))
			}
		})
	}
}

// TestE2ECubeMesh checks preferred allocations on the DGX-1V profile
// against sets worked out by hand from its link matrix (see
// TestPreferredCubeMesh for the arithmetic), and Allocate.
func TestE2ECubeMesh(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {plugin: {deviceListStrategy: [envvar]}}\n")
	a := startAgent(t, dir, "--mock-profile", "dgx1-v100", "--config", cfg)
	ctx := a.ctx
	p, err := k.Plugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	n := discover(t, "dgx1-v100")
	u := func(idx ...int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, n.GPUs[i].UUID)
		}
		return out
	}
	all := u(0, 1, 2, 3, 4, 5, 6, 7)
	for _, tc := range []struct {
		avail, must []string
		size        int32
		want        []string
	}{
		{all, nil, 2, u(0, 3)},
		{all, u(1), 2, u(1, 2)},
		{all, u(6), 2, u(5, 6)},
		{all, nil, 4, u(0, 1, 2, 3)},
		{all, u(5), 4, u(4, 5, 6, 7)},
		{all, u(0, 4), 4, u(0, 2, 3, 4)},
		{u(1, 2, 3, 5, 6, 7), nil, 4, u(1, 2, 3, 5)},
		{all, nil, 8, all},
	} {
		resp, err := p.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{
			{AvailableDeviceIDs: tc.avail, MustIncludeDeviceIDs: tc.must, AllocationSize: tc.size},
		}})
		if err != nil {
			t.Fatal(err)
		}
		got := append([]string(nil), resp.ContainerResponses[0].DeviceIDs...)
		sort.Strings(got)
		want := append([]string(nil), tc.want...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("preferred %d with %d must-include: got %v, want %v", tc.size, len(tc.must), got, want)
		}
	}
	resp, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{
		{DevicesIds: u(0, 3)}, {DevicesIds: u(7)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c0, c1 := resp.ContainerResponses[0], resp.ContainerResponses[1]
	if c0.Envs["NVIDIA_VISIBLE_DEVICES"] != n.GPUs[0].UUID+","+n.GPUs[3].UUID || len(c0.CdiDevices) != 0 {
		t.Errorf("container 0: %v", c0)
	}
	if c1.Envs["NVIDIA_VISIBLE_DEVICES"] != n.GPUs[7].UUID {
		t.Errorf("container 1: %v", c1)
	}
	if _, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"GPU-bogus"}}}}); err == nil || !strings.Contains(err.Error(), `unknown device ID "GPU-bogus"`) {
		t.Errorf("bogus ID: %v", err)
	}
}

func TestE2EHealth(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	faults := filepath.Join(dir, "faults.yaml")
	a := startAgent(t, dir, "--mock-profile", "l40s-pcie-4", "--mock-faults-file", faults)
	ctx := a.ctx
	p, err := k.Plugin(ctx, "nvidia.com/gpu")
	if err != nil {
		t.Fatal(err)
	}
	n := discover(t, "l40s-pcie-4")
	health := func(devs []*pluginapi.Device) string {
		s := ""
		for _, d := range devs {
			s += d.Health[:1] // H or U
		}
		return s
	}
	// XID 79 (fallen off the bus) on GPU 3 is critical; XID 13 on GPU 1 is
	// an application error and ignored.
	writeFile(t, dir, "faults.yaml", fmt.Sprintf("faults:\n- {uuid: %s, xid: 13}\n- {uuid: %s, xid: 79}\n", n.GPUs[1].UUID, n.GPUs[3].UUID))
	devs, err := p.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d) != "HHHH" })
	if err != nil || health(devs) != "HHHU" {
		t.Fatalf("after XIDs: %s, %v", health(devs), err)
	}
	if _, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{n.GPUs[3].UUID}}}}); err == nil || !strings.Contains(err.Error(), "unhealthy") {
		t.Errorf("Allocate of the unhealthy GPU: %v", err)
	}
	// GPU 0 is lost as well, then everything recovers.
	writeFile(t, dir, "faults.yaml", fmt.Sprintf("faults:\n- {uuid: %s, lost: true}\n- {uuid: %s, xid: 79}\n", n.GPUs[0].UUID, n.GPUs[3].UUID))
	if devs, err = p.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d) == "UHHU" }); err != nil {
		t.Fatalf("after loss: %s, %v", health(devs), err)
	}
	writeFile(t, dir, "faults.yaml", "faults: []\n")
	if devs, err = p.WaitDevices(ctx, func(d []*pluginapi.Device) bool { return health(d) == "HHHH" }); err != nil {
		t.Fatalf("after recovery: %s, %v", health(devs), err)
	}
	if _, err := p.Allocate(ctx, &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{n.GPUs[3].UUID}}}}); err != nil {
		t.Errorf("Allocate after recovery: %v", err)
	}
}

func TestE2EKubeletRestart(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {migStrategy: mixed}\n")
	a := startAgent(t, dir, "--mock-profile", "dgx-a100-80gb-mig", "--config", cfg)
	ctx := a.ctx
	want := []string{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"}
	waitResources(t, ctx, k, want)
	for round := 0; round < 2; round++ {
		k.Stop() // deletes kubelet.sock
		k2, err := kubelettest.Start(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k2.Stop)
		k = k2
		waitResources(t, ctx, k, want)
		p, _ := k.Plugin(ctx, "nvidia.com/mig-3g.40gb")
		if got, healthy := ids(p.Devices()); len(got) != 2 || !healthy {
			t.Errorf("round %d: mig-3g.40gb lists %v", round, got)
		}
	}
	if strings.Count(a.out.String(), "Kubelet socket created") != 2 {
		t.Errorf("agent did not log two kubelet restarts")
	}
	select {
	case err := <-a.done:
		t.Fatalf("agent exited: %v", err)
	default:
	}
}

func TestE2EAgentRestart(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nsharing: {timeSlicing: {renameByDefault: true, resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n")
	a := startAgent(t, dir, "--mock-profile", "dgx-h100", "--config", cfg)
	ctx := a.ctx
	p, err := k.Plugin(ctx, "nvidia.com/gpu.shared")
	if err != nil {
		t.Fatal(err)
	}
	n := discover(t, "dgx-h100")
	req := &pluginapi.AllocateRequest{ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{n.GPUs[5].UUID + "::1", n.GPUs[2].UUID + "::0"}}}}
	before, err := p.Allocate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := before.ContainerResponses[0].Envs["NVIDIA_VISIBLE_DEVICES"]; got != n.GPUs[5].UUID+","+n.GPUs[2].UUID {
		t.Errorf("NVIDIA_VISIBLE_DEVICES=%s", got)
	}
	// Kill the agent (no clean-up: its socket stays behind) and start it again.
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := a.wait(t); err == nil || !errors.As(err, new(*exec.ExitError)) {
		t.Fatalf("killed agent: %v", err)
	}
	regs := len(k.Registrations())
	a2 := startAgent(t, dir, "--mock-profile", "dgx-h100", "--config", cfg)
	ctx = a2.ctx
	if err := k.Wait(ctx, func(k *kubelettest.Kubelet) bool {
		p := k.PluginLocked("nvidia.com/gpu.shared")
		return k.RegistrationCountLocked() > regs && p != nil && p.DevicesLocked() != nil
	}); err != nil {
		t.Fatal(err)
	}
	p, _ = k.Plugin(ctx, "nvidia.com/gpu.shared")
	after, err := p.Allocate(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if before.String() != after.String() {
		t.Errorf("Allocate after restart: %v, before: %v", after, before)
	}
	if got, healthy := ids(p.Devices()); len(got) != 16 || !healthy {
		t.Errorf("after restart: %d devices, healthy %v", len(got), healthy)
	}
}

// TestE2ESingleInvalid: single on a node of mixed MIG profiles and whole
// GPUs keeps the agent running, advertising nothing, with
// gpu-feature-discovery's MIG-INVALID labels (k8s-device-plugin
// internal/lm/mig-strategy.go) and an error in the log naming a GPU.
func TestE2ESingleInvalid(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {migStrategy: single}\n")
	labelsFile := filepath.Join(dir, "features")
	a := startAgent(t, dir, "--mock-profile", "dgx-a100-80gb-mig", "--config", cfg, "--labels-file", labelsFile)
	deadline := time.After(60 * time.Second)
	var data []byte
	for {
		data, _ = os.ReadFile(labelsFile) // written atomically
		if len(data) > 0 {
			break
		}
		select {
		case err := <-a.done:
			a.done <- err
			t.Fatalf("agent exited: %v", err)
		case <-deadline:
			t.Fatal("no labels file after 60 s")
		case <-time.After(20 * time.Millisecond):
		}
	}
	for _, line := range []string{"nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB-MIG-INVALID", "nvidia.com/gpu.count=0", "nvidia.com/gpu.memory=0", "nvidia.com/gpu.replicas=0", "nvidia.com/gpu.sharing-strategy=", "nvidia.com/mig.strategy=single"} {
		if !strings.Contains(string(data), line+"\n") {
			t.Errorf("labels file lacks %s:\n%s", line, data)
		}
	}
	a.stop(t) // exits 0: it was running
	if out := a.out.String(); !strings.Contains(out, "Devices not advertised") || !strings.Contains(out, "migStrategy single: GPU 6") {
		t.Errorf("log does not name the excluded GPUs:\n%s", out)
	}
	if n := len(k.Registrations()); n != 0 {
		t.Errorf("%d registrations, want none", n)
	}
}

func TestE2ELabelsFile(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	cfg := writeFile(t, dir, "config.yaml", "version: v1\nflags: {migStrategy: mixed}\n")
	labelsFile := filepath.Join(dir, "features")
	a := startAgent(t, dir, "--mock-profile", "dgx-a100-80gb-mig", "--config", cfg, "--labels-file", labelsFile)
	ctx := a.ctx
	waitResources(t, ctx, k, []string{"nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb", "nvidia.com/mig-3g.40gb"})
	data, err := os.ReadFile(labelsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"nvidia.com/gpu.count=8", "nvidia.com/mig.strategy=mixed", "nvidia.com/mig-1g.10gb.count=32", "gpuplane.io/gpu.nvlink-clique-size=8", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB"} {
		if !strings.Contains(string(data), line+"\n") {
			t.Errorf("labels file lacks %s:\n%s", line, data)
		}
	}
	a.stop(t)
}

// TestE2EWaitEndsOnAgentExit: an agent that cannot serve its metrics
// address exits, and a wait on its work ends then, saying so, instead of
// running to its deadline.
func TestE2EWaitEndsOnAgentExit(t *testing.T) {
	dir := shortDir(t)
	k := startKubelet(t, dir)
	a := startAgent(t, dir, "--mock-profile", "l40s-pcie-4", "--metrics-addr", "256.0.0.1:0")
	_, err := k.Plugin(a.ctx, "nvidia.com/gpu")
	if err == nil || !strings.Contains(err.Error(), "agent exited: exit status") {
		t.Fatalf("wait on an exited agent: %v, want \"agent exited\"", err)
	}
	if a.ctx.Err() != context.Canceled {
		t.Errorf("ended by %v, want the agent's exit (context.Canceled), not the deadline", a.ctx.Err())
	}
}
