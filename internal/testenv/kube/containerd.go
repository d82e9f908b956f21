// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Real containers under a test kubelet (KubeletOptions.Containerd):
// containerd (binaries.txt) with its runc shim and Debian's runc, every
// path of it under the node's directory:
//
//	<Dir>/containerd/containerd.toml   its configuration (containerdConfig)
//	<Dir>/containerd/containerd.sock   the CRI and containerd API (no TCP;
//	                                   the CRI streaming server is on
//	                                   127.0.0.1, a port picked by the kernel)
//	<Dir>/containerd/{root,state,runc} its root, state and runc's state
//	<Dir>/containerd/cni               a CNI config naming no real plugin
//	<Dir>/cdi                          its CDI spec directory (CDIDir)
//
// containerd runs in a mount namespace of its own, which the kubelet then
// joins (nsenter): the kubelet's volume mounts are where runc finds them,
// and every mount either makes (overlayfs rootfs, /dev/shm) goes with the
// namespace. containerd and its shims run in the cgroup
// <cgroupRoot>/containerd, so that Stop finds any shim or container
// process left and a killed test's are killed by the next start (reap).
// There is no pod network: pods must use hostNetwork (the CNI config only
// lets the runtime report its network ready, which the Node's Ready needs).
//
// Stop removes every pod sandbox through the CRI (stopping its
// containers), then stops containerd, and fails when a process is left in
// its cgroup, a mount under Dir in the host's mount table, or a shim
// socket of its own in /run/containerd/s (the shims' fixed directory,
// containerd pkg/shim/util_unix.go, SocketAddress).

// Containerd is a test node's containerd.
type Containerd struct {
	// Socket is containerd's API socket (CRI included), Log its log.
	Socket, Log string
	// CDIDir is containerd's one CDI spec directory (cdi_spec_dirs).
	CDIDir string
	// Ctr is the ctr program, run against Socket by Import.
	Ctr string

	dir    string
	cgroup string
	proc   *proc
}

// shimSocketDir is where every containerd shim puts its socket.
const shimSocketDir = "/run/containerd/s"

// containerdConfig is containerd's configuration (version 4, what
// `containerd config default` of v2.4.2 writes; docs/cri/config.md of
// containerd v2.4): dir is the containerd
// directory, pause the sandbox image. CDI is always on in containerd v2
// (enable_cdi is gone); cdi_spec_dirs names the node's one directory. The
// plugins that would use fixed host paths are disabled: NRI
// (/var/run/nri), opt (/opt/containerd) and the image verifier
// (/opt/containerd/image-verifier); no file is imported
// (/etc/containerd/conf.d by default). restrict_oom_score_adj keeps a
// container's oom_score_adj at or above containerd's own: the kubelet asks
// -998 for a pod sandbox and up to 1000 for containers, and lowering it
// needs CAP_SYS_RESOURCE, which this machine's root lacks (runc fails
// with "nsexec: failed to update /proc/self/oom_score_adj: Permission
// denied").
func containerdConfig(dir, cdiDir, pause, shim, runc string) string {
	q := strconv.Quote
	return `version = 4
root = ` + q(filepath.Join(dir, "root")) + `
state = ` + q(filepath.Join(dir, "state")) + `
imports = []
disabled_plugins = ["io.containerd.nri.v1.nri", "io.containerd.internal.v1.opt", "io.containerd.image-verifier.v1.bindir"]

[plugins."io.containerd.server.v1.grpc"]
  address = ` + q(filepath.Join(dir, "containerd.sock")) + `

[plugins."io.containerd.server.v1.ttrpc"]
  address = ` + q(filepath.Join(dir, "containerd.sock.ttrpc")) + `

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = ` + q(pause) + `

[plugins."io.containerd.cri.v1.runtime"]
  cdi_spec_dirs = [` + q(cdiDir) + `]
  restrict_oom_score_adj = true

[plugins."io.containerd.cri.v1.runtime".cni]
  conf_dir = ` + q(filepath.Join(dir, "cni")) + `
  bin_dirs = [` + q(filepath.Join(dir, "cni-bin")) + `]

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"
  runtime_path = ` + q(shim) + `

[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
  BinaryName = ` + q(runc) + `
  Root = ` + q(filepath.Join(dir, "runc")) + `
  SystemdCgroup = false
`
}

// hostNetworkOnlyCNI is the CNI config: containerd's CRI reports the
// network ready once a config is loaded (containerd/go-cni Status), and a
// hostNetwork pod never runs its plugin, which does not exist.
const hostNetworkOnlyCNI = `{"cniVersion": "1.0.0", "name": "gpuplane-host-network-only", "plugins": [{"type": "gpuplane-no-such-plugin"}]}`

// findRunc returns Debian's runc (/usr/sbin) or the one on the PATH.
func findRunc() (string, error) {
	if fi, err := os.Stat("/usr/sbin/runc"); err == nil && fi.Mode()&0o111 != 0 {
		return "/usr/sbin/runc", nil
	}
	p, err := exec.LookPath("runc")
	if err != nil {
		return "", fmt.Errorf("runc not found (apt-get install runc): %w", err)
	}
	return p, nil
}

// startContainerd starts containerd for the node at nodeDir in the node's
// cgroup <cgroupRoot>/containerd (made here, under every cgroup v1
// hierarchy), with pause as its sandbox image, and returns when its CRI
// answers.
func startContainerd(ctx context.Context, nodeDir, cgroupRoot, pause string) (_ *Containerd, err error) {
	bin, err := Find("containerd")
	if err != nil {
		return nil, err
	}
	shim, err := Find("containerd-shim-runc-v2")
	if err != nil {
		return nil, err
	}
	c := &Containerd{dir: filepath.Join(nodeDir, "containerd"), CDIDir: filepath.Join(nodeDir, "cdi"), cgroup: cgroupRoot + "/containerd"}
	if c.Ctr, err = Find("ctr"); err != nil {
		return nil, err
	}
	runc, err := findRunc()
	if err != nil {
		return nil, err
	}
	c.Socket = filepath.Join(c.dir, "containerd.sock")
	c.Log = filepath.Join(nodeDir, "containerd.log")
	for _, d := range []string{filepath.Join(c.dir, "cni"), c.CDIDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	config := filepath.Join(c.dir, "containerd.toml")
	files := map[string]string{
		config: containerdConfig(c.dir, c.CDIDir, pause, shim, runc),
		filepath.Join(c.dir, "cni", "10-gpuplane.conflist"): hostNetworkOnlyCNI,
	}
	for f, s := range files {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			return nil, err
		}
	}
	if err := makeCgroups(c.cgroup); err != nil {
		return nil, err
	}
	// The Go runtime makes the new namespace's mounts private
	// (MS_REC|MS_PRIVATE on /, after CLONE_NEWNS); sh makes them shared
	// again, a peer group of the namespace's own, before it becomes
	// containerd: a pod's hostPath mount with HostToContainer or
	// Bidirectional propagation (the chart's driver root) needs its
	// source on a shared or slave mount, which containerd's CRI checks
	// (internal/cri/opts/spec_linux.go, ensureShared/ensureSharedOrSlave).
	// Nothing propagates to or from the host's namespace.
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Unshareflags: syscall.CLONE_NEWNS}
	args := []string{"-c", `mount --make-rshared / && exec "$0" "$@"`, bin, "--config", config}
	if c.proc, err = startProcAttr("containerd", "/bin/sh", args, nil, c.Log, attr, func(*proc) {}); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
		}
	}()
	// Before its first shim: every shim and container is then in it.
	if err := joinCgroup(c.cgroup, c.proc.cmd.Process.Pid); err != nil {
		return nil, err
	}
	return c, c.waitReady(ctx)
}

// waitReady polls the CRI's Status every 50 ms until the runtime and its
// network are ready,
// ending early when containerd exits or ctx ends.
func (c *Containerd) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		last = c.withCRI(ctx, func(rt runtimeapi.RuntimeServiceClient) error {
			actx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			st, err := rt.Status(actx, &runtimeapi.StatusRequest{})
			if err != nil {
				return err
			}
			// The two conditions the kubelet needs (a third,
			// ContainerdHasNoDeprecationWarnings, is false on cgroup v1).
			for _, cond := range st.GetStatus().GetConditions() {
				if (cond.Type == runtimeapi.RuntimeReady || cond.Type == runtimeapi.NetworkReady) && !cond.Status {
					return fmt.Errorf("containerd: %s false: %s %s", cond.Type, cond.Reason, cond.Message)
				}
			}
			return nil
		})
		if last == nil {
			return nil
		}
		select {
		case <-c.proc.done:
			return fmt.Errorf("waiting for containerd: %w", c.proc.exitError())
		case <-ctx.Done():
			return fmt.Errorf("waiting for containerd: %w (last error: %v); last lines of %s:\n%s", ctx.Err(), last, c.Log, tail(c.Log, 15))
		case <-tick.C:
		}
	}
}

// withCRI calls f with a CRI runtime client on containerd's socket.
func (c *Containerd) withCRI(ctx context.Context, f func(runtimeapi.RuntimeServiceClient) error) error {
	conn, err := grpc.NewClient("unix://"+c.Socket, grpc.WithTransportCredentials(insecure.NewCredentials())) // a local unix socket
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(runtimeapi.NewRuntimeServiceClient(conn))
}

// Import imports the images of an OCI image archive (or a docker save
// archive) into the CRI's namespace, k8s.io, unpacked for its
// snapshotter, so that pods run them with imagePullPolicy Never and no
// registry: `ctr images import`, as kind's `kind load` does.
func (c *Containerd) Import(ctx context.Context, archive string) error {
	out, err := exec.CommandContext(ctx, c.Ctr, "--address", c.Socket, "--namespace", "k8s.io", "images", "import", "--local", archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", archive, err, out)
	}
	return nil
}

// stop removes every pod sandbox (StopPodSandbox, RemovePodSandbox: their
// containers stop and go), stops containerd, and checks that nothing is
// left (see the top of the file). Processes left in its cgroup are killed
// and named in the error.
func (c *Containerd) stop() error {
	var errs []error
	// This containerd's shims' sockets, named from its tasks while they
	// exist: another test's containerd (another package's, run at the
	// same time) has shims in the same directory.
	own := shimSocketNames(filepath.Dir(c.dir))
	select {
	case <-c.proc.done:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, c.withCRI(ctx, removeSandboxes))
		cancel()
		errs = append(errs, c.proc.stop(30*time.Second))
	}
	// The shims exit once their tasks are deleted.
	var left []int
	for i := 0; i < 500; i++ {
		if left = cgroupProcs(c.cgroup); len(left) == 0 {
			break
		}
		sleep10ms()
	}
	if len(left) > 0 {
		killCgroupProcs(c.cgroup)
		errs = append(errs, fmt.Errorf("containerd: processes %v left in cgroup %s, killed", left, c.cgroup))
	}
	if m := mountsUnder(filepath.Dir(c.dir)); len(m) > 0 {
		errs = append(errs, fmt.Errorf("containerd: mounts left in the host's mount table: %s", strings.Join(m, ", ")))
	}
	for n := range dirNames(shimSocketDir) {
		if own[n] {
			errs = append(errs, fmt.Errorf("containerd: shim socket %s left", filepath.Join(shimSocketDir, n)))
		}
	}
	// The directories a shim made, when it was the first: empty now.
	_ = os.Remove(shimSocketDir)
	_ = os.Remove(filepath.Dir(shimSocketDir))
	return errors.Join(errs...)
}

// removeSandboxes stops and removes every pod sandbox.
func removeSandboxes(rt runtimeapi.RuntimeServiceClient) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("containerd: list pod sandboxes: %w", err)
	}
	var errs []error
	for _, s := range l.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("containerd: stop pod sandbox %s: %w", s.Metadata.GetName(), err))
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("containerd: remove pod sandbox %s: %w", s.Metadata.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// dirNames returns the names in a directory (none when it is missing).
func dirNames(dir string) map[string]bool {
	ents, _ := os.ReadDir(dir)
	out := map[string]bool{}
	for _, e := range ents {
		out[e.Name()] = true
	}
	return out
}

// mountsUnder returns the mount points at or under dir in this process's
// mount table (/proc/self/mountinfo's fifth field, octal escapes as the
// kernel writes them).
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return []string{"(cannot read /proc/self/mountinfo: " + err.Error() + ")"}
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		if p := f[4]; p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

// ContainerLog returns what a container of a pod wrote (stdout and stderr
// in order, the last run's), read from the kubelet's pod log directory
// (podLogsDir/<namespace>_<pod>_<uid>/<container>/<restart>.log, in the
// CRI's log format: readCRILog).
func (k *KubeletNode) ContainerLog(namespace, pod, container string) (string, error) {
	files, err := filepath.Glob(filepath.Join(k.Dir, "pod-logs", namespace+"_"+pod+"_*", container, "*.log"))
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("no log of container %s of pod %s/%s under %s", container, namespace, pod, filepath.Join(k.Dir, "pod-logs"))
	}
	return readCRILog(files[len(files)-1])
}

// readCRILog returns the text of a container log file in the CRI's format
// (k8s.io/cri-api, "<RFC 3339 time> <stream> <P|F> <text>" a line, a P
// line continued by the next).
func readCRILog(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 3 {
			return "", fmt.Errorf("%s: not a CRI log line: %q", file, line)
		}
		if len(f) == 4 {
			out.WriteString(f[3])
		}
		if f[2] == "F" {
			out.WriteString("\n")
		}
	}
	return out.String(), nil
}

// Leftovers lists what a stopped node left on the host: mounts under its
// directory in the host's mount table, its cgroups under any hierarchy,
// and processes in them. Empty after a clean Stop.
func (k *KubeletNode) Leftovers() []string {
	var out []string
	for _, m := range mountsUnder(k.Dir) {
		out = append(out, "mount "+m)
	}
	if k.entry == nil {
		return out
	}
	for _, h := range cgroupHierarchies(true) {
		if _, err := os.Stat(filepath.Join(h, k.entry.cgroupName())); err == nil {
			out = append(out, "cgroup "+filepath.Join(h, k.entry.cgroupName()))
		}
	}
	for _, pid := range cgroupProcs(k.entry.cgroupName()) {
		out = append(out, "process "+strconv.Itoa(pid))
	}
	return out
}

// removeShimSockets removes the shim sockets a killed node's shims left
// in shimSocketDir: one per task in its containerd's state
// (state/io.containerd.runtime.v2.task/<namespace>/<id>), named by the
// SHA-256 of <containerd address>/<namespace>/<id> (containerd
// pkg/shim/util_unix.go, CreateSocketAddress), then the directories when
// empty.
func removeShimSockets(nodeDir string) {
	for n := range shimSocketNames(nodeDir) {
		_ = os.Remove(filepath.Join(shimSocketDir, n))
	}
	_ = os.Remove(shimSocketDir)
	_ = os.Remove(filepath.Dir(shimSocketDir))
}

// shimSocketNames is the names in shimSocketDir of the shim sockets of the
// tasks in the state of the node's containerd under nodeDir: the SHA-256
// of <containerd address>/<namespace>/<id> (containerd
// pkg/shim/util_unix.go, SocketAddress), one per task directory
// (state/io.containerd.runtime.v2.task/<namespace>/<id>).
func shimSocketNames(nodeDir string) map[string]bool {
	address := filepath.Join(nodeDir, "containerd", "containerd.sock")
	state := filepath.Join(nodeDir, "containerd", "state", "io.containerd.runtime.v2.task")
	names := map[string]bool{}
	nss, _ := os.ReadDir(state)
	for _, ns := range nss {
		ids, _ := os.ReadDir(filepath.Join(state, ns.Name()))
		for _, id := range ids {
			d := sha256.Sum256([]byte(filepath.Join(address, ns.Name(), id.Name())))
			names[hex.EncodeToString(d[:])] = true
		}
	}
	return names
}
