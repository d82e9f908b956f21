// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package kube

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/gpuplane/gpuplane/internal/atomicfile"
)

// What a real kubelet changes on the host outside its own directories, and
// how test nodes undo it. The kubelet's mounts (the device-plugin
// directory, /var/log) live in its private mount namespace and go with it;
// what remains is host-wide:
//
//   - six sysctls, which the kubelet's container manager sets
//     (k8s.io/kubernetes pkg/kubelet/cm/container_manager_linux.go,
//     setupKernelTunables): vm.overcommit_memory=1, vm.panic_on_oom=0,
//     kernel.panic=10, kernel.panic_on_oops=1, kernel.keys.root_maxkeys and
//     kernel.keys.root_maxbytes. They are recorded before the first test
//     kubelet on the machine starts and restored when the last one stops;
//   - the cgroups under its cgroupRoot, one per node, made by the test and
//     filled by the kubelet (kubepods, its QoS classes, one per pod), under
//     every cgroup v1 hierarchy and the unified one of a hybrid host;
//     removed when the node stops.
//
// The state (the recorded sysctls and one entry per live node, with the
// process that owns it) is in hostStateDir, under a lock, shared by every
// test process on the machine. A node whose owner died (a killed test) is
// cleaned up by the next start or stop of any node.

// kubeletSysctls are the sysctls the kubelet may set.
var kubeletSysctls = []string{
	"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
	"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes",
}

// cgroupPrefix starts the name of every test node's cgroupRoot.
const cgroupPrefix = "gpuplane-kubelet-"

// cgroupMount is where the cgroup v1 hierarchies are mounted.
var cgroupMount = "/sys/fs/cgroup"

// hostStateDir is where the state lives: /run (a tmpfs, emptied at boot,
// when the sysctls and cgroups are reset too) when it is writable.
func hostStateDir() string {
	if fi, err := os.Stat("/run"); err == nil && fi.IsDir() && syscall.Access("/run", 2) == nil {
		return "/run/gpuplane-kubelet"
	}
	return filepath.Join(os.TempDir(), "gpuplane-kubelet")
}

// nodeEntry is a live test node in the host state.
type nodeEntry struct {
	ID string `json:"id"`
	// Owner is the test process, OwnerStart its start time (clock ticks
	// since boot, /proc/PID/stat field 22), so a reused pid is not taken
	// for it.
	Owner      int    `json:"owner"`
	OwnerStart uint64 `json:"ownerStart"`
	// Kubelet is the kubelet's pid while it runs (0 otherwise), with its
	// start time.
	Kubelet      int    `json:"kubelet,omitempty"`
	KubeletStart uint64 `json:"kubeletStart,omitempty"`
	// Dir is the node's working directory, removed with a dead entry when
	// RemoveDir is set.
	Dir       string `json:"dir"`
	RemoveDir bool   `json:"removeDir,omitempty"`
}

// cgroupName is the node's cgroupRoot (without the leading slash).
func (e *nodeEntry) cgroupName() string { return cgroupPrefix + e.ID }

// hostState is the locked state; lockHostState returns it, unlock
// releases it.
type hostState struct {
	dir  string
	lock *os.File
}

func lockHostState() (*hostState, error) {
	dir := hostStateDir()
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return &hostState{dir: dir, lock: f}, nil
}

func (h *hostState) unlock() { h.lock.Close() } // closing releases the flock

func (h *hostState) entryFile(id string) string { return filepath.Join(h.dir, "nodes", id+".json") }

func (h *hostState) put(e *nodeEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f := h.entryFile(e.ID)
	return atomicfile.Write(f, b, 0o644)
}

func (h *hostState) entries() ([]*nodeEntry, error) {
	ents, err := os.ReadDir(filepath.Join(h.dir, "nodes"))
	if err != nil {
		return nil, err
	}
	var out []*nodeEntry
	for _, d := range ents {
		if !strings.HasSuffix(d.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(h.dir, "nodes", d.Name()))
		if err != nil {
			return nil, err
		}
		var e nodeEntry
		if err := json.Unmarshal(b, &e); err != nil || e.ID == "" {
			// A torn file: writes are renames, so only a foreign file.
			_ = os.Remove(filepath.Join(h.dir, "nodes", d.Name()))
			continue
		}
		out = append(out, &e)
	}
	return out, nil
}

// procStart returns a process's start time, or 0 when it is not running.
func procStart(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 || f[0] == "Z" {
		return 0
	}
	v, _ := strconv.ParseUint(f[19], 10, 64) // field 22 counts from the pid
	return v
}

func alive(pid int, start uint64) bool { return pid > 0 && start != 0 && procStart(pid) == start }

// recordSysctls saves the current values unless a saved set exists (a
// test kubelet is running, or a killed one's values await restoring).
func (h *hostState) recordSysctls() error {
	f := filepath.Join(h.dir, "sysctls.json")
	if _, err := os.Stat(f); err == nil {
		return nil
	}
	vals := map[string]string{}
	for _, k := range kubeletSysctls {
		b, err := os.ReadFile("/proc/sys/" + k)
		if err != nil {
			continue // absent on this kernel: the kubelet fails or skips it too
		}
		vals[k] = strings.TrimSpace(string(b))
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	return atomicfile.Write(f, b, 0o644)
}

// restoreSysctls writes the saved values back and forgets them.
func (h *hostState) restoreSysctls() error {
	f := filepath.Join(h.dir, "sysctls.json")
	b, err := os.ReadFile(f)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var vals map[string]string
	if err := json.Unmarshal(b, &vals); err != nil {
		return fmt.Errorf("%s: %w", f, err)
	}
	var errs []error
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cur, err := os.ReadFile("/proc/sys/" + k)
		if err == nil && strings.TrimSpace(string(cur)) == vals[k] {
			continue
		}
		if err := os.WriteFile("/proc/sys/"+k, []byte(vals[k]+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", strings.ReplaceAll(k, "/", "."), vals[k], err))
		}
	}
	if len(errs) == 0 {
		errs = append(errs, os.Remove(f))
	}
	return errors.Join(errs...)
}

// cgroupHierarchies returns the mounted cgroup hierarchies' directories
// (cgroupMount alone on a cgroup v2 host)
// (cpu and cpuacct may be one hierarchy under two names; each real
// directory once), the unified (v2) one of a hybrid host only with
// unified set: the kubelet's cgroup library makes its cgroups there too,
// but checks and needs only the v1 ones.
func cgroupHierarchies(unified bool) []string {
	// A cgroup v2 host: one hierarchy, mounted at cgroupMount itself.
	if _, err := os.Stat(filepath.Join(cgroupMount, "cgroup.controllers")); err == nil {
		return []string{cgroupMount}
	}
	ents, err := os.ReadDir(cgroupMount)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, e := range ents {
		if e.Name() == "unified" && !unified {
			continue
		}
		p := filepath.Join(cgroupMount, e.Name())
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] {
			continue
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(real, "cgroup.procs")); err != nil {
			continue
		}
		seen[real] = true
		out = append(out, real)
	}
	return out
}

// makeCgroups creates the cgroup name under every hierarchy (the kubelet
// checks its cgroupRoot exists under each it uses), with cpuset's CPUs
// and memory nodes copied from the root, since a new cpuset has none.
func makeCgroups(name string) error {
	for _, h := range cgroupHierarchies(false) {
		p := filepath.Join(h, name)
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make cgroup: %w", err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			if v, err := os.ReadFile(filepath.Join(h, f)); err == nil {
				if err := os.WriteFile(filepath.Join(p, f), v, 0o644); err != nil {
					return fmt.Errorf("make cgroup: %w", err)
				}
			}
		}
	}
	return nil
}

// removeCgroups removes the cgroup name and everything the kubelet made
// under it, deepest first, under every hierarchy. A cgroup that still
// holds a process cannot be removed; the error names it.
func removeCgroups(name string) error {
	var errs []error
	for _, h := range cgroupHierarchies(true) {
		root := filepath.Join(h, name)
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}

// reap cleans up after the nodes whose owner has died: kills a kubelet
// still running (Pdeathsig should have) and every process left in the
// node's cgroups (a real-container node's shims and containers), removes their cgroups, their
// directory when it was a temporary one, and their entry; then removes
// any cgroup under the prefix that no entry names (a start killed
// between the two). When no entry is left it restores the sysctls. It
// returns the live entries.
func (h *hostState) reap() ([]*nodeEntry, error) {
	ents, err := h.entries()
	if err != nil {
		return nil, err
	}
	var live []*nodeEntry
	var errs []error
	for _, e := range ents {
		if alive(e.Owner, e.OwnerStart) {
			live = append(live, e)
			continue
		}
		if alive(e.Kubelet, e.KubeletStart) {
			_ = syscall.Kill(e.Kubelet, syscall.SIGKILL)
			waitGone(e.Kubelet, e.KubeletStart)
		}
		// A real-container node's containerd shims and containers, and
		// the shims' sockets.
		killCgroupProcs(e.cgroupName())
		removeShimSockets(e.Dir)
		if err := removeCgroups(e.cgroupName()); err != nil {
			errs = append(errs, err)
			continue
		}
		if e.RemoveDir && e.Dir != "" {
			_ = os.RemoveAll(e.Dir)
		}
		_ = os.Remove(h.entryFile(e.ID))
	}
	named := map[string]bool{}
	for _, e := range ents {
		named[e.cgroupName()] = true
	}
	for _, hier := range cgroupHierarchies(true) {
		ds, _ := os.ReadDir(hier)
		for _, d := range ds {
			if d.IsDir() && strings.HasPrefix(d.Name(), cgroupPrefix) && !named[d.Name()] {
				killCgroupProcs(d.Name())
				if err := removeCgroups(d.Name()); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if len(live) == 0 && len(errs) == 0 {
		if err := h.restoreSysctls(); err != nil {
			errs = append(errs, err)
		}
	}
	return live, errors.Join(errs...)
}

// waitGone waits (up to 5 s) until a killed process has gone.
func waitGone(pid int, start uint64) {
	for i := 0; i < 500 && alive(pid, start); i++ {
		sleep10ms()
	}
}

// joinCgroup moves a process into the cgroup name under every cgroup v1
// hierarchy (every one on a cgroup v2 host); its children are born there.
func joinCgroup(name string, pid int) error {
	for _, h := range cgroupHierarchies(false) {
		f := filepath.Join(h, name, "cgroup.procs")
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("join cgroup: %w", err)
		}
	}
	return nil
}

// cgroupProcs returns the processes in the cgroup name or below it, in
// any hierarchy, each once.
func cgroupProcs(name string) []int {
	seen := map[int]bool{}
	var out []int
	for _, h := range cgroupHierarchies(true) {
		_ = filepath.WalkDir(filepath.Join(h, name), func(p string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			b, _ := os.ReadFile(filepath.Join(p, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
					seen[pid] = true
					out = append(out, pid)
				}
			}
			return nil
		})
	}
	sort.Ints(out)
	return out
}

// killCgroupProcs kills (SIGKILL) every process in the cgroup name or
// below it, a containerd shim and its container's processes left by a
// killed test, and waits (up to 5 s) until they have gone.
func killCgroupProcs(name string) {
	for i := 0; i < 500; i++ {
		procs := cgroupProcs(name)
		if len(procs) == 0 {
			return
		}
		if i%50 == 0 {
			for _, pid := range procs {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		sleep10ms()
	}
}
