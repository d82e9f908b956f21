// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletBinary is the kubelet for a test; the test is skipped without
// it or without root, and fails so under CI.
func kubeletBinary(t *testing.T) string {
	t.Helper()
	p := Binary(t, "kubelet")
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but a kubelet node needs root")
		}
		t.Skip("a kubelet node needs root")
	}
	return p
}

// sysctlValues reads the sysctls a kubelet sets.
func sysctlValues(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range kubeletSysctls {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err == nil {
			out[k] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// sysctlsAlone reads the sysctls under the host-state lock and says
// whether no test kubelet runs on the machine then: only then are they
// the host's own (test binaries of other packages run kubelets
// concurrently).
func sysctlsAlone(t *testing.T) (map[string]string, bool) {
	t.Helper()
	h, err := lockHostState()
	if err != nil {
		t.Fatal(err)
	}
	defer h.unlock()
	live, err := h.reap()
	if err != nil {
		t.Fatal(err)
	}
	return sysctlValues(t), len(live) == 0
}

// nodeCgroups returns the cgroups of one test node under every hierarchy.
func nodeCgroups(name string) []string {
	var out []string
	for _, h := range cgroupHierarchies(true) {
		if _, err := os.Stat(filepath.Join(h, name)); err == nil {
			out = append(out, filepath.Join(h, name))
		}
	}
	return out
}

// TestKubeletNode starts a real kubelet against the test control plane,
// runs a pod on it through the recording fake runtime, and stops it,
// checking that nothing is left: no process, cgroup, directory or changed
// sysctl.
func TestKubeletNode(t *testing.T) {
	c := StartT(t, Options{})
	ctx := t.Context()
	kubelet := kubeletBinary(t)
	before, aloneBefore := sysctlsAlone(t)
	k, err := c.StartKubeletNode(ctx, "real-0", KubeletOptions{Kubelet: kubelet, Labels: map[string]string{"gpuplane.io/test": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			if t.Failed() {
				t.Logf("kubelet log:\n%s", tail(k.Log, 40))
			}
			k.Stop()
		}
	})
	t.Logf("node %s Ready %v after the kubelet started (node IP %s)", k.Name, k.ReadyAfter.Round(time.Millisecond), k.IP)
	n, err := c.Client.CoreV1().Nodes().Get(ctx, "real-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ip string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			ip = a.Address
		}
	}
	if ip != k.IP || n.Labels["gpuplane.io/test"] != "yes" || n.Status.NodeInfo.KubeletVersion != Version("kubelet") ||
		int(n.Status.DaemonEndpoints.KubeletEndpoint.Port) != k.Port || len(n.Spec.Taints) != 0 {
		t.Errorf("node: InternalIP %s (want %s), labels %v, kubelet %s, port %d (want %d), taints %v",
			ip, k.IP, n.Labels, n.Status.NodeInfo.KubeletVersion, n.Status.DaemonEndpoints.KubeletEndpoint.Port, k.Port, n.Spec.Taints)
	}
	cgroups := nodeCgroups(k.entry.cgroupName())
	if len(cgroups) == 0 {
		t.Errorf("no cgroup %s", k.entry.cgroupName())
	}
	if _, err := os.Stat(filepath.Join(cgroupMount, "memory", k.entry.cgroupName(), "kubepods")); err != nil {
		t.Errorf("the kubelet made no kubepods cgroup: %v", err)
	}
	for _, d := range []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods"} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s exists on the host (%v)", d, err)
		}
	}

	// A pod bound to the node runs: its container is created with what
	// the pod asked for.
	start := time.Now()
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hello"},
		Spec: corev1.PodSpec{NodeName: "real-0", Containers: []corev1.Container{{
			Name: "main", Image: "example.com/no/such/image:1", Command: []string{"sleep", "inf"},
			Env: []corev1.EnvVar{{Name: "GREETING", Value: "hi"}},
		}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := c.waitUntil(wctx, "pod hello Running", func(ctx context.Context) error {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "hello", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("pod Running %v after it was created", time.Since(start).Round(time.Millisecond))
	recs, err := k.Records()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Pod != "hello" || recs[0].Namespace != "default" || recs[0].Container != "main" ||
		recs[0].Env["GREETING"] != "hi" || recs[0].Image != "example.com/no/such/image:1" || strings.Join(recs[0].Command, " ") != "sleep inf" {
		t.Errorf("records %+v", recs)
	}

	// Stop leaves nothing.
	pid := k.Pid()
	dir := k.Dir
	stopped = true
	if err := k.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kubelet pid %d still exists after Stop (kill 0: %v)", pid, err)
	}
	if left := nodeCgroups(k.entry.cgroupName()); len(left) != 0 {
		t.Errorf("cgroups left: %v", left)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop (%v)", dir, err)
	}
	if after, alone := sysctlsAlone(t); aloneBefore && alone && fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("sysctls %v after Stop, %v before", after, before)
	}
}

// TestKubeletKilled: a test process that is killed (SIGKILL) while its
// kubelet node runs leaves the kubelet dead (Pdeathsig) and its cgroups,
// directory and sysctl changes behind, and the next start of any test
// node (here its first step, reap) removes and restores them.
func TestKubeletKilled(t *testing.T) { testKubeletKilled(t, false) }

// TestKubeletKilledContainerd is TestKubeletKilled with a real-container
// node (KubeletOptions.Containerd) running a pod: the shims and the
// pod's processes outlive the killed test (they are not its children),
// and reap kills them before it removes the cgroups.
func TestKubeletKilledContainerd(t *testing.T) { testKubeletKilled(t, true) }

func testKubeletKilled(t *testing.T, containerd bool) {
	if os.Getenv("GPUPLANE_KUBELET_CHILD") != "" {
		killedChild(containerd)
		return
	}
	kubeletBinary(t)
	Binary(t, "kube-controller-manager")
	if containerd {
		Binary(t, "containerd")
	}
	before, aloneBefore := sysctlsAlone(t)
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$")
	cmd.Env = append(os.Environ(), "GPUPLANE_KUBELET_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "READY ") {
				line <- sc.Text()
			}
		}
		close(line)
	}()
	var f []string
	select {
	case l, ok := <-line:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("the child exited before its node was Ready:\n%s", stderr.String())
		}
		f = strings.Fields(l)
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child's node was not Ready in 2 minutes:\n%s", stderr.String())
	}
	cgroup, dir, clusterDir := f[1], f[2], f[3]
	kubeletPid, _ := strconv.Atoi(f[4])
	type process struct {
		pid   int
		start uint64
	}
	procs := []process{{kubeletPid, procStart(kubeletPid)}}
	for _, p := range strings.Split(f[5], ",") {
		pid, _ := strconv.Atoi(p)
		procs = append(procs, process{pid, procStart(pid)})
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	for _, p := range procs { // Pdeathsig; the kubelet first
		for i := 0; alive(p.pid, p.start); i++ {
			if i == 1000 {
				t.Fatalf("pid %d still running 10 s after its test was killed", p.pid)
			}
			sleep10ms()
		}
	}
	// The control plane's directory is a killed Start's leftover, not
	// the node's.
	os.RemoveAll(clusterDir)
	if len(nodeCgroups(cgroup)) == 0 {
		t.Fatalf("no cgroups %s left to clean up: the test proves nothing", cgroup)
	}
	if containerd && len(cgroupProcs(cgroup)) == 0 {
		t.Fatalf("no shim or container process left in %s: the test proves nothing", cgroup)
	}
	// The killed node's shims' sockets, from its containerd's tasks (other
	// tests' containerd shims share the directory).
	own := shimSocketNames(dir)
	if containerd && len(own) == 0 {
		t.Fatalf("no containerd task in %s: the test proves nothing", dir)
	}
	h, err := lockHostState()
	if err != nil {
		t.Fatal(err)
	}
	live, err := h.reap()
	after := sysctlValues(t) // under the lock: no kubelet starts meanwhile
	h.unlock()
	if err != nil {
		t.Fatal(err)
	}
	if left := nodeCgroups(cgroup); len(left) != 0 {
		t.Errorf("cgroups left after reap: %v", left)
	}
	if left := cgroupProcs(cgroup); len(left) != 0 {
		t.Errorf("processes left after reap: %v", left)
	}
	for n := range dirNames(shimSocketDir) {
		if own[n] {
			t.Errorf("shim socket %s left after reap", filepath.Join(shimSocketDir, n))
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("node directory %s left after reap (%v)", dir, err)
	}
	// Another test's kubelet would keep the sysctls changed.
	if aloneBefore && len(live) == 0 && fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("sysctls %v after reap, %v before", after, before)
	}
}

// killedChild is TestKubeletKilled's child: it starts a cluster and a
// kubelet node (with containerd, and a pod running `probe pause` on it),
// prints what the parent checks, and waits to be killed.
func killedChild(containerd bool) {
	ctx := context.Background()
	c, err := Start(ctx, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k, err := c.StartKubeletNode(ctx, "killed-0", KubeletOptions{Containerd: containerd})
	if err == nil && containerd {
		err = runPausePod(ctx, c, k.Name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		c.Stop()
		os.Exit(1)
	}
	var pids []string
	for _, p := range c.Pids() {
		pids = append(pids, strconv.Itoa(p))
	}
	fmt.Printf("READY %s %s %s %d %s\n", k.entry.cgroupName(), k.Dir, c.Dir, k.Pid(), strings.Join(pids, ","))
	select {}
}

// TestTwoKubeletNodes runs two kubelets on the machine at once, each in
// its own mount namespace, cgroupRoot, ports and runtime: both nodes are
// Ready and run a pod each. The sysctls stay the kubelet's while either
// runs and are restored when the second stops.
func TestTwoKubeletNodes(t *testing.T) {
	c := StartT(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	kubelet := kubeletBinary(t)
	before, aloneBefore := sysctlsAlone(t)
	var nodes [2]*KubeletNode
	errs := make(chan error, 2)
	for i := range nodes {
		go func() {
			var err error
			nodes[i], err = c.StartKubeletNode(ctx, fmt.Sprintf("pair-%d", i), KubeletOptions{Kubelet: kubelet})
			errs <- err
		}()
	}
	for range nodes {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		for _, k := range nodes {
			if k != nil {
				if t.Failed() {
					t.Logf("kubelet %s log:\n%s", k.Name, tail(k.Log, 30))
				}
				k.Stop()
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	if nodes[0].DevicePluginDir == nodes[1].DevicePluginDir || nodes[0].Port == nodes[1].Port || nodes[0].entry.cgroupName() == nodes[1].entry.cgroupName() {
		t.Fatalf("the nodes share a directory, port or cgroup: %+v %+v", nodes[0], nodes[1])
	}
	for i, k := range nodes {
		t.Logf("node %s Ready after %v", k.Name, k.ReadyAfter.Round(time.Millisecond))
		// Each kubelet serves its own kubelet.sock, in its own directory.
		if _, err := os.Stat(filepath.Join(k.DevicePluginDir, "kubelet.sock")); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
		if _, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p-%d", i)},
			Spec:       corev1.PodSpec{NodeName: k.Name, Containers: []corev1.Container{{Name: "main", Image: "example.com/x:1"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range nodes {
		if err := c.waitUntil(ctx, "pod Running", func(ctx context.Context) error {
			p, err := c.Client.CoreV1().Pods("default").Get(ctx, fmt.Sprintf("p-%d", i), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if p.Status.Phase != corev1.PodRunning {
				return fmt.Errorf("phase %s", p.Status.Phase)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if recs, err := k.Records(); err != nil || len(recs) != 1 || recs[0].Pod != fmt.Sprintf("p-%d", i) {
			t.Errorf("node %s records %+v (%v), want its own pod's only", k.Name, recs, err)
		}
	}
	during := sysctlValues(t)
	if err := nodes[0].Stop(); err != nil {
		t.Fatal(err)
	}
	if got := sysctlValues(t); fmt.Sprint(got) != fmt.Sprint(during) {
		t.Errorf("sysctls %v after the first node stopped, want the kubelet's %v while the second runs", got, during)
	}
	if err := nodes[1].Stop(); err != nil {
		t.Fatal(err)
	}
	if got, alone := sysctlsAlone(t); aloneBefore && alone && fmt.Sprint(got) != fmt.Sprint(before) {
		t.Errorf("sysctls %v after both stopped, %v before", got, before)
	}
}

// runPausePod runs a host-network pod of the probe image (its default
// argument, pause) on the node and waits (up to 2 minutes) until it is
// Running.
func runPausePod(ctx context.Context, c *Cluster, node string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pause"},
		Spec: corev1.PodSpec{NodeName: node, HostNetwork: true, AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "main", Image: ProbeImage, ImagePullPolicy: corev1.PullNever}}},
	}, metav1.CreateOptions{}); err != nil {
		return err
	}
	return c.waitUntil(ctx, "pod pause Running", func(ctx context.Context) error {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "pause", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("phase %s", p.Status.Phase)
		}
		return nil
	})
}
