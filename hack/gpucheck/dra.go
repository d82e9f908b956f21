// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	cdiapi "tags.cncf.io/container-device-interface/pkg/cdi"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/node/gpucdi"
)

// draCheck are the settings of checkDRA.
type draCheck struct {
	// dir holds the plugin's checkpoint, MPS daemons and CDI specs.
	dir string
	// driverRoot is the driver root of the specs' driver files
	// (--driver-root); "" for none (the mock backend in tests).
	driverRoot string
	// migMinors is the MIG capability table ("" on the mock).
	migMinors string
	// specOut, when set, receives a copy of the whole GPU's CDI spec
	// before unprepare, for the cuInit check of hack/gpu-check.sh.
	specOut string
	// mps runs the MPS share step (needs nvidia-cuda-mps-control).
	mps bool
	// mpsLoad, when set, is mpsload.py, run with python3 under the MPS
	// shares (needs torch): their throughput and memory limit.
	mpsLoad string
}

// node is the node name of checkDRA's claims and pool.
const draNode = "gpucheck"

// mpsShare is the GpuConfig of the MPS shares: NVIDIA's DRA driver's
// (resource.nvidia.com/v1beta1), limits from each share.
const mpsShare = `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"MPS"}}`

// checkDRA prepares and unprepares claims through the node agent's DRA
// plugin (internal/node/dra) in this process, with CDI specs carrying the
// driver's files, and prints PASS or FAIL lines: a whole GPU (dra-whole:
// its CDI IDs resolve in the CDI library's cache; dra-cdi-files: every
// device node and mount of its spec exists on the host), the prepare
// latency (dra-prepare-latency, never failed on time), and with c.mps two
// 500-milliGPU shares of the same GPU under MPS (dra-mps: one daemon,
// CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 in each claim's spec); unprepare
// removes every spec (dra-unprepare). No GPU setting is changed: the
// whole GPU is a GPU without MIG, prepared without creating anything.
func checkDRA(ctx context.Context, w io.Writer, b device.Backend, n device.Node, c draCheck) error {
	gi := slices.IndexFunc(n.GPUs, func(g device.GPU) bool { return !g.MIGEnabled })
	if gi < 0 {
		fmt.Fprintln(w, "SKIP dra: every GPU is in MIG mode")
		return nil
	}
	cfg := dra.Config{
		NodeName: draNode, KubeClient: fake.NewClientset(),
		PluginDir: filepath.Join(c.dir, "plugin"), RegistrarDir: filepath.Join(c.dir, "registry"),
		CDIDir: filepath.Join(c.dir, "cdi"), MIGMinorsPath: c.migMinors, Shares: true,
	}
	if c.driverRoot != "" {
		e, err := gpucdi.DriverEdits(gpucdi.DriverConfig{Root: c.driverRoot, Version: n.DriverVersion})
		verdict(w, err == nil, "dra-driver-files", "nvcdi under %s, driver %s: %v", c.driverRoot, n.DriverVersion, err)
		cfg.DriverEdits, cfg.DevRoot = e, gpucdi.DevRoot(c.driverRoot)
	}
	d, err := dra.New(ctx, b, cfg)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("gpu-%d", n.GPUs[gi].Minor) // dra.Build's name
	whole := claim("whole", []string{name}, "", "")
	start := time.Now()
	ids, err := prepare(ctx, d, whole)
	fmt.Fprintf(w, "PASS dra-prepare-latency: %s of GPU %s in %.1f ms\n", name, n.GPUs[gi].UUID, float64(time.Since(start).Microseconds())/1000)
	verdict(w, err == nil && len(ids) == 1, "dra-whole", "CDI IDs %v, %v", ids, err)
	if err == nil {
		checkSpecs(w, cfg.CDIDir, ids)
		if c.specOut != "" {
			copySpec(w, gpucdi.SpecPath(cfg.CDIDir, n.GPUs[gi].UUID), c.specOut)
		}
	}
	claims := []*resourceapi.ResourceClaim{whole}
	if c.mps {
		claims = append(claims, checkMPSShares(ctx, w, d, n.GPUs[gi].UUID, name, cfg.CDIDir, c.mpsLoad)...)
	}
	if err := unprepare(ctx, d, claims); err != nil {
		verdict(w, false, "dra-unprepare", "%v", err)
	}
	checkMIG(ctx, w, b, n, d, cfg.CDIDir)
	left, _ := filepath.Glob(filepath.Join(cfg.CDIDir, "*"))
	verdict(w, len(left) == 0, "dra-unprepare", "no spec left: %v", left)
	return nil
}

// unprepare unprepares claims, joining their errors.
func unprepare(ctx context.Context, d *dra.Driver, claims []*resourceapi.ResourceClaim) error {
	var errs []error
	for _, cl := range claims {
		res, err := d.UnprepareResourceClaims(ctx, []kubeletplugin.NamespacedObject{{NamespacedName: types.NamespacedName{Namespace: cl.Namespace, Name: cl.Name}, UID: cl.UID}})
		if err == nil {
			err = res[cl.UID]
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("claim %s: %w", cl.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkMIG creates and destroys one MIG device through the plugin: on
// the first GPU already in MIG mode with a free placement, a claim of
// the first one the plugin publishes there (the smallest profile) is
// prepared (the plugin creates the MIG device; its spec's nodes and
// mounts must exist) and unprepared (the plugin destroys it: the GPU's
// live MIG devices are those before). MIG mode is never changed: no
// GPU in MIG mode, or none with room, is a SKIP line.
func checkMIG(ctx context.Context, w io.Writer, b device.Backend, n device.Node, d *dra.Driver, cdiDir string) {
	mm, ok := b.(device.MIGManager)
	if !ok || !slices.ContainsFunc(n.GPUs, func(g device.GPU) bool { return g.MIGEnabled }) {
		fmt.Fprintln(w, "SKIP mig: no GPU in MIG mode (MIG mode is never changed)")
		return
	}
	static, err := liveMIG(ctx, b, n)
	if err != nil {
		verdict(w, false, "mig", "live MIG devices: %v", err)
		return
	}
	offers, err := dra.MIGOffers(ctx, b, n)
	if err != nil {
		verdict(w, false, "mig", "MIG offers: %v", err)
		return
	}
	r, err := dra.Build(n, dra.Options{MIG: true, Static: static, Offers: offers})
	if err != nil {
		verdict(w, false, "mig", "%v", err)
		return
	}
	i := slices.IndexFunc(r.Devices, func(dev resourceapi.Device) bool {
		e := r.Entries[dev.Name]
		return e.MIG != nil && e.MIG.UUID == ""
	})
	if i < 0 {
		fmt.Fprintln(w, "SKIP mig: no free MIG placement on the GPUs in MIG mode")
		return
	}
	name := r.Devices[i].Name
	gpu := n.GPUs[r.Entries[name].GPU].UUID
	before, _ := mm.MIGInstances(ctx, gpu)
	cl := claim("mig", []string{name}, "", "")
	start := time.Now()
	ids, err := prepare(ctx, d, cl)
	verdict(w, err == nil && len(ids) == 1, "mig-create", "%s created and prepared in %.1f ms: CDI IDs %v, %v", name, float64(time.Since(start).Microseconds())/1000, ids, err)
	if err != nil {
		return
	}
	checkSpecs(w, cdiDir, ids)
	err = unprepare(ctx, d, []*resourceapi.ResourceClaim{cl})
	after, aerr := mm.MIGInstances(ctx, gpu)
	verdict(w, err == nil && aerr == nil && len(after) == len(before), "mig-destroy", "%s unprepared: %v; %d live MIG devices on %s before, %d after (%v)", name, err, len(before), gpu, len(after), aerr)
}

// checkMPSShares prepares two shares (500 milliGPU, 20 GiB) of device
// name, GPU gpu, under MPS and checks each claim's spec gives its client
// 50 % of the SMs, a 20480 MiB pinned memory limit and the daemon's pipe;
// with load, mpsLoad's checks run under them. It returns the claims to
// unprepare.
func checkMPSShares(ctx context.Context, w io.Writer, d *dra.Driver, gpu, name, cdiDir, load string) []*resourceapi.ResourceClaim {
	var alone float64
	if load != "" {
		r, err := runLoad(ctx, load, []string{"CUDA_VISIBLE_DEVICES=" + gpu}, "matmul", "8")
		alone = r.TFLOPS
		verdict(w, err == nil && alone > 0, "dra-mps-alone", "one client without MPS: %.1f TFLOP/s, %v", alone, err)
	}
	var out []*resourceapi.ResourceClaim
	var envs [][]string
	for i := range 2 {
		cl := claim(fmt.Sprint("mps-", i), []string{name}, types.UID(fmt.Sprint("share-", i)), mpsShare)
		start := time.Now()
		ids, err := prepare(ctx, d, cl)
		ms := float64(time.Since(start).Microseconds()) / 1000
		if err != nil {
			verdict(w, false, "dra-mps", "share %d: %v", i, err)
			continue
		}
		out = append(out, cl)
		env, hostEnv := claimEnv(cdiDir, ids)
		ok := slices.Contains(env, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50") && slices.Contains(env, "CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps") &&
			slices.Contains(env, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT="+gpu+"=20480M")
		verdict(w, ok, "dra-mps", "share %d prepared in %.1f ms, CDI IDs %v, claim env %v", i, ms, ids, env)
		envs = append(envs, append(hostEnv, "CUDA_VISIBLE_DEVICES="+gpu))
	}
	if load == "" {
		fmt.Fprintln(w, "SKIP dra-mps-load: no torch (no CUDA clients under the shares)")
	} else if len(envs) == 2 {
		checkMPSLoad(ctx, w, load, envs, alone)
	}
	return out
}

// checkMPSLoad runs two matmul clients at once, one under each share's
// environment: each must run at 30 to 70 % of one client alone (50 % of
// the SMs each; issue 35's H200: 48 % and 48 %); and a 24 GiB allocation
// under the 20 GiB limit must fail.
func checkMPSLoad(ctx context.Context, w io.Writer, load string, envs [][]string, alone float64) {
	type res struct {
		r   loadResult
		err error
	}
	ch := make([]chan res, len(envs))
	for i, env := range envs {
		ch[i] = make(chan res, 1)
		go func() {
			r, err := runLoad(ctx, load, env, "matmul", "8")
			ch[i] <- res{r, err}
		}()
	}
	for i := range envs {
		r := <-ch[i]
		frac := r.r.TFLOPS / alone
		verdict(w, r.err == nil && alone > 0 && frac >= 0.3 && frac <= 0.7, "dra-mps-throughput", "share %d: %.1f TFLOP/s, %.0f %% of one alone, with the other share's client running; %v", i, r.r.TFLOPS, 100*frac, r.err)
	}
	r, err := runLoad(ctx, load, envs[0], "alloc", "24")
	verdict(w, err == nil && !r.Allocated, "dra-mps-memlimit", "24 GiB under the 20 GiB share: allocated %v (%s), %v", r.Allocated, r.Error, err)
}

// loadResult is mpsload.py's line.
type loadResult struct {
	TFLOPS    float64 `json:"tflops"`
	Allocated bool    `json:"allocated"`
	Error     string  `json:"error"`
}

// runLoad runs python3 load args with env added and returns its last
// line, parsed.
func runLoad(ctx context.Context, load string, env []string, args ...string) (loadResult, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", append([]string{load}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	var r loadResult
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err == nil && jerr != nil {
		err = fmt.Errorf("mpsload.py %v: %q: %w", args, out, jerr)
	}
	if err == nil && r.Error != "" && !slices.Contains(args, "alloc") {
		err = errors.New(r.Error)
	}
	return r, err
}

// claim is an allocated claim of devices on draNode (requests r0, r1,
// ...), each a share of 500 milliGPU and 20 GiB when share is set, under
// the opaque GpuConfig config when set.
func claim(name string, devices []string, share types.UID, config string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "gpucheck", Name: name, UID: types.UID("gpucheck-" + name)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for i, dev := range devices {
		r := resourceapi.DeviceRequestAllocationResult{Request: fmt.Sprint("r", i), Driver: apidra.DriverName, Pool: draNode, Device: dev}
		if share != "" {
			r.ShareID = &share
			r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("500"), apidra.CapacityMemory: resource.MustParse("20Gi")}
		}
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, r)
	}
	if config != "" {
		c.Status.Allocation.Devices.Config = []resourceapi.DeviceAllocationConfiguration{{
			Source: resourceapi.AllocationConfigSourceClaim,
			DeviceConfiguration: resourceapi.DeviceConfiguration{Opaque: &resourceapi.OpaqueDeviceConfiguration{
				Driver: apidra.DriverName, Parameters: runtime.RawExtension{Raw: []byte(config)},
			}},
		}}
	}
	return c
}

// prepare prepares one claim and returns its CDI device IDs.
func prepare(ctx context.Context, d *dra.Driver, c *resourceapi.ResourceClaim) ([]string, error) {
	res, err := d.PrepareResourceClaims(ctx, []*resourceapi.ResourceClaim{c})
	if err != nil {
		return nil, err
	}
	r := res[c.UID]
	if r.Err != nil {
		return nil, r.Err
	}
	var ids []string
	for _, dev := range r.Devices {
		ids = append(ids, dev.CDIDeviceIDs...)
	}
	return ids, nil
}

// checkSpecs resolves ids in the CDI cache of dir, as the runtimes do,
// and checks every device node and mount source of their edits exists.
func checkSpecs(w io.Writer, dir string, ids []string) {
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(dir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		verdict(w, false, "dra-cdi-files", "CDI cache: %v", err)
		return
	}
	var missing []string
	nodes, mounts := 0, 0
	for _, id := range ids {
		dev := cache.GetDevice(id)
		if dev == nil {
			missing = append(missing, id+" (not in the CDI cache)")
			continue
		}
		for _, n := range dev.ContainerEdits.DeviceNodes {
			nodes++
			p := n.HostPath
			if p == "" {
				p = n.Path
			}
			if _, err := os.Stat(p); err != nil {
				missing = append(missing, p)
			}
		}
		for _, m := range dev.ContainerEdits.Mounts {
			mounts++
			if _, err := os.Stat(m.HostPath); err != nil {
				missing = append(missing, m.HostPath)
			}
		}
	}
	verdict(w, len(missing) == 0 && len(cache.GetErrors()) == 0, "dra-cdi-files", "%d device nodes, %d mounts; missing %v; CDI errors %v", nodes, mounts, missing, cache.GetErrors())
}

// claimEnv returns the environment of the claim's own CDI device among
// ids (gpuplane.io/claim=...), read from its spec in dir, as a container
// gets it and as a process on the host needs it: each variable naming a
// mount's container path (CUDA_MPS_PIPE_DIRECTORY) given its host path.
func claimEnv(dir string, ids []string) (env, host []string) {
	cache, err := cdiapi.NewCache(cdiapi.WithSpecDirs(dir), cdiapi.WithAutoRefresh(false))
	if err != nil {
		return nil, nil
	}
	for _, id := range ids {
		dev := cache.GetDevice(id)
		if !strings.HasPrefix(id, "gpuplane.io/claim=") || dev == nil {
			continue
		}
		for _, v := range dev.ContainerEdits.Env {
			k, val, _ := strings.Cut(v, "=")
			for _, m := range dev.ContainerEdits.Mounts {
				if m.ContainerPath == val {
					val = m.HostPath
				}
			}
			host = append(host, k+"="+val)
		}
		return dev.ContainerEdits.Env, host
	}
	return nil, nil
}

// copySpec copies the spec at path to out.
func copySpec(w io.Writer, path, out string) {
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.WriteFile(out, data, 0o644)
	}
	if err != nil {
		verdict(w, false, "dra-spec-copy", "%v", err)
	}
}
