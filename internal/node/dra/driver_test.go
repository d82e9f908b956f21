// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/mock"
)

const node = "node-a"

// kubelet is a kubelet double: the API server's objects (a fake
// clientset) and the plugin's DRA gRPC service on its unix socket.
type kubelet struct {
	t      *testing.T
	client *fake.Clientset
	dirs   Config
	conn   *grpc.ClientConn
	dra    drapb.DRAPluginClient
}

func newKubelet(t *testing.T) *kubelet {
	// Short paths: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "dra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, UID: "node-uid"}})
	// The fake object tracker does not generate names; the ResourceSlice
	// controller asks for them.
	var generated atomic.Int64
	client.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if obj, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && obj.GetName() == "" && obj.GetGenerateName() != "" {
			obj.SetName(obj.GetGenerateName() + strconv.FormatInt(generated.Add(1), 10))
		}
		return false, nil, nil
	})
	return &kubelet{t: t, client: client, dirs: Config{
		NodeName:     node,
		KubeClient:   client,
		PluginDir:    filepath.Join(dir, "plugin"),
		RegistrarDir: filepath.Join(dir, "reg"),
		CDIDir:       filepath.Join(dir, "cdi"),
		PCIeRoot:     fakeRoot,
	}}
}

// start starts a plugin over backend b and connects to its socket.
func (k *kubelet) start(b device.Backend) *Driver {
	k.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	k.t.Cleanup(cancel)
	for _, dir := range []string{k.dirs.PluginDir, k.dirs.RegistrarDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			k.t.Fatal(err)
		}
	}
	d, err := New(ctx, b, k.dirs)
	if err != nil {
		k.t.Fatal(err)
	}
	if err := d.Start(ctx); err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(d.Stop)
	conn, err := grpc.NewClient("unix://"+filepath.Join(k.dirs.PluginDir, "dra.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		k.t.Fatal(err)
	}
	k.t.Cleanup(func() { conn.Close() })
	k.conn, k.dra = conn, drapb.NewDRAPluginClient(conn)
	return d
}

// claim creates an allocated claim of devices (request name "r<i>").
func (k *kubelet) claim(name string, devices ...string) *resourceapi.ResourceClaim {
	k.t.Helper()
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for i, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results, resourceapi.DeviceRequestAllocationResult{
			Request: "r" + string(rune('0'+i)), Driver: apidra.DriverName, Pool: node, Device: d,
		})
	}
	c, err := k.client.ResourceV1().ResourceClaims("default").Create(context.Background(), c, metav1.CreateOptions{})
	if err != nil {
		k.t.Fatal(err)
	}
	return c
}

func pbClaim(c *resourceapi.ResourceClaim) *drapb.Claim {
	return &drapb.Claim{Namespace: c.Namespace, Name: c.Name, Uid: string(c.UID)}
}

// prepare calls NodePrepareResources for one claim and returns its CDI
// device IDs, or its error.
func (k *kubelet) prepare(c *resourceapi.ResourceClaim) ([]string, string) {
	k.t.Helper()
	resp, err := k.dra.NodePrepareResources(context.Background(), &drapb.NodePrepareResourcesRequest{Claims: []*drapb.Claim{pbClaim(c)}})
	if err != nil {
		k.t.Fatal(err)
	}
	r := resp.Claims[string(c.UID)]
	if r == nil {
		k.t.Fatalf("no response for claim %s", c.Name)
	}
	var ids []string
	for _, d := range r.Devices {
		ids = append(ids, d.CdiDeviceIds...)
	}
	return ids, r.Error
}

func (k *kubelet) unprepare(c *resourceapi.ResourceClaim) {
	k.t.Helper()
	resp, err := k.dra.NodeUnprepareResources(context.Background(), &drapb.NodeUnprepareResourcesRequest{Claims: []*drapb.Claim{pbClaim(c)}})
	if err != nil {
		k.t.Fatal(err)
	}
	if e := resp.Claims[string(c.UID)].GetError(); e != "" {
		k.t.Fatalf("unprepare %s: %s", c.Name, e)
	}
}

// slices waits for the plugin's ResourceSlices and returns their devices
// and counter sets by name.
func (k *kubelet) slices(want int) (map[string]resourceapi.Device, map[string]resourceapi.CounterSet) {
	k.t.Helper()
	var list *resourceapi.ResourceSliceList
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		var err error
		list, err = k.client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == want, nil
	})
	if err != nil {
		k.t.Fatalf("waiting for %d ResourceSlices: %v", want, err)
	}
	devs, sets := map[string]resourceapi.Device{}, map[string]resourceapi.CounterSet{}
	for _, s := range list.Items {
		if s.Spec.Driver != apidra.DriverName || s.Spec.Pool.Name != node || ptrDeref(s.Spec.NodeName) != node {
			k.t.Errorf("slice %s: driver %s, pool %s, node %v", s.Name, s.Spec.Driver, s.Spec.Pool.Name, s.Spec.NodeName)
		}
		for _, d := range s.Spec.Devices {
			devs[d.Name] = d
		}
		for _, c := range s.Spec.SharedCounters {
			sets[c.Name] = c
		}
	}
	return devs, sets
}

func ptrDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func liveMIG(t *testing.T, b *mock.Backend, gpu string) []string {
	t.Helper()
	ins, err := b.MIGInstances(context.Background(), gpu)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, in := range ins {
		out = append(out, in.GIProfile+"@"+string(rune('0'+in.Placement.Start)))
	}
	return out
}

// TestPlugin runs the plugin over the mock backend behind a kubelet
// double: ResourceSlices published, a whole GPU and MIG devices prepared
// over the DRA gRPC service, an overlapping MIG device refused, a restart
// between prepare and unprepare, unprepare.
func TestPlugin(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	d := k.start(b)

	devs, sets := k.slices(2) // one of devices, one of counter sets
	if len(devs) != 26 || len(sets) != 1 {
		t.Fatalf("published %d devices, %d counter sets; want 26 (25 placements, gpu-1) and 1", len(devs), len(sets))
	}
	if got := str(devs["gpu-1"].Attributes["uuid"]); got != n.GPUs[1].UUID {
		t.Errorf("gpu-1 uuid %q", got)
	}

	// A whole GPU: NVIDIA's toolkit's CDI name, and a spec for it.
	whole := k.claim("whole", "gpu-1")
	ids, errStr := k.prepare(whole)
	if errStr != "" || strings.Join(ids, ",") != "nvidia.com/gpu="+n.GPUs[1].UUID {
		t.Fatalf("prepare whole: %v %q", ids, errStr)
	}
	spec, err := os.ReadFile(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Kind    string `json:"kind"`
		Devices []struct {
			Name           string `json:"name"`
			ContainerEdits struct {
				DeviceNodes []struct{ Path string } `json:"deviceNodes"`
			} `json:"containerEdits"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(spec, &s); err != nil {
		t.Fatal(err)
	}
	if s.Kind != "nvidia.com/gpu" || len(s.Devices) != 1 || s.Devices[0].Name != n.GPUs[1].UUID || s.Devices[0].ContainerEdits.DeviceNodes[0].Path != "/dev/nvidia1" {
		t.Errorf("CDI spec: %s", spec)
	}
	// Idempotent: the same answer again.
	if ids2, _ := k.prepare(whole); strings.Join(ids2, ",") != strings.Join(ids, ",") {
		t.Errorf("second prepare: %v, want %v", ids2, ids)
	}

	// A MIG device is created on prepare.
	g0 := n.GPUs[0].UUID
	mig := k.claim("mig", "gpu-0-mig-3g40gb-9-4")
	ids, errStr = k.prepare(mig)
	if errStr != "" || len(ids) != 1 || !strings.HasPrefix(ids[0], "nvidia.com/gpu=MIG-") {
		t.Fatalf("prepare mig: %v %q", ids, errStr)
	}
	if got := liveMIG(t, b, g0); strings.Join(got, ",") != "3g.40gb@4" {
		t.Fatalf("live MIG devices %v, want 3g.40gb@4", got)
	}
	migID := ids[0]

	// An overlapping placement is refused, as NVML refuses it; the whole
	// GPU 0, in MIG mode, is no device.
	over := k.claim("over", "gpu-0-mig-1g10gb-19-5")
	if _, errStr := k.prepare(over); !strings.Contains(errStr, "overlaps") {
		t.Errorf("overlapping MIG device: error %q, want an overlap", errStr)
	}
	if _, held := d.Prepared()["uid-over"]; held {
		t.Error("the failed claim is still recorded")
	}
	k.unprepare(over) // nothing to undo
	if _, errStr := k.prepare(k.claim("gpu0", "gpu-0")); !strings.Contains(errStr, "device gpu-0 of request r0: no such device on node node-a") {
		t.Errorf("the whole GPU in MIG mode: error %q", errStr)
	}
	if _, errStr := k.prepare(k.claim("again", "gpu-1")); !strings.Contains(errStr, "already prepared for claim uid-whole") {
		t.Errorf("a whole GPU twice: error %q", errStr)
	}
	k.unprepare(k.claim("gpu0b", "gpu-0"))

	// Restart between prepare and unprepare: the checkpoint has it all.
	d.Stop()
	d = k.start(b)
	if ids, _ := k.prepare(mig); len(ids) != 1 || ids[0] != migID {
		t.Errorf("prepare after restart: %v, want %s", ids, migID)
	}
	if got := liveMIG(t, b, g0); strings.Join(got, ",") != "3g.40gb@4" {
		t.Errorf("live MIG devices after restart %v, want the one 3g.40gb@4", got)
	}
	k.unprepare(mig)
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Errorf("live MIG devices after unprepare: %v", got)
	}
	k.unprepare(mig) // idempotent
	k.unprepare(whole)
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)); !os.IsNotExist(err) {
		t.Errorf("CDI spec of gpu-1 after unprepare: %v", err)
	}
	// Refused claims were never recorded; the others are undone.
	if p := d.Prepared(); len(p) != 0 {
		t.Errorf("claims still prepared: %v", p)
	}
}

// A restart after the MIG device was created but before the checkpoint
// recorded it: the next prepare adopts the device instead of creating a
// second one.
func TestPrepareAdoptsInterrupted(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	g0 := n.GPUs[0].UUID
	// What an interrupted prepare leaves: the claim recorded as started,
	// the MIG device created, its UUID not recorded.
	if _, err := b.CreateMIG(context.Background(), g0, "1g.10gb", 2); err != nil {
		t.Fatal(err)
	}
	cp := &Checkpoint{Version: checkpointVersion, Claims: map[types.UID]*PreparedClaim{"uid-c": {
		Namespace: "default", Name: "c", State: PrepareStarted,
		Devices: []PreparedDevice{{Requests: []string{"r0"}, Pool: node, Device: "gpu-0-mig-1g10gb-19-2", GPUUUID: g0, MIG: &PreparedMIG{GIProfile: "1g.10gb", Start: 2}}},
	}}}
	if err := os.MkdirAll(k.dirs.PluginDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := cp.save(filepath.Join(k.dirs.PluginDir, checkpointFile)); err != nil {
		t.Fatal(err)
	}
	k.start(b)
	c := k.claim("c", "gpu-0-mig-1g10gb-19-2")
	ids, errStr := k.prepare(c)
	if errStr != "" || len(ids) != 1 {
		t.Fatalf("prepare: %v %q", ids, errStr)
	}
	if got := liveMIG(t, b, g0); strings.Join(got, ",") != "1g.10gb@2" {
		t.Errorf("live MIG devices %v, want the one 1g.10gb@2", got)
	}
	k.unprepare(c)
	if got := liveMIG(t, b, g0); len(got) != 0 {
		t.Errorf("live MIG devices after unprepare: %v", got)
	}
}

// With shares a GPU is prepared for several claims, each with its share
// ID; its CDI spec goes with the last.
func TestPrepareShared(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.dirs.Shares = true
	k.start(b)
	devs, _ := k.slices(2)
	if a := devs["gpu-1"].AllowMultipleAllocations; a == nil || !*a {
		t.Fatal("gpu-1 is not published shared")
	}
	var claims []*resourceapi.ResourceClaim
	for i, name := range []string{"a", "b"} {
		c := k.claim(name, "gpu-1")
		share := types.UID(fmt.Sprintf("share-%d", i))
		c.Status.Allocation.Devices.Results[0].ShareID = &share
		if _, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		ids, errStr := k.prepare(c)
		if errStr != "" || strings.Join(ids, ",") != "nvidia.com/gpu="+n.GPUs[1].UUID {
			t.Fatalf("prepare %s: %v %q", name, ids, errStr)
		}
		claims = append(claims, c)
	}
	spec := cdiSpecPath(k.dirs.CDIDir, n.GPUs[1].UUID)
	k.unprepare(claims[0])
	if _, err := os.Stat(spec); err != nil {
		t.Errorf("CDI spec gone with one claim left: %v", err)
	}
	k.unprepare(claims[1])
	if _, err := os.Stat(spec); !os.IsNotExist(err) {
		t.Errorf("CDI spec after the last claim: %v", err)
	}
}

// TestPrepareShareEnv: a share of gpu-1 (milliGPU 300 and 10Gi consumed)
// is given, besides nvidia.com/gpu=<UUID>, the claim's own CDI device
// gpuplane.io/claim=<claim UID>-gpu-1, whose spec sets GPUPLANE_GPU_SHARE=300;
// unprepare removes that spec.
func TestPrepareShareEnv(t *testing.T) {
	b, n := mockNode(t, twoA100)
	k := newKubelet(t)
	k.dirs.Shares = true
	k.start(b)
	k.slices(2)
	c := k.claim("a", "gpu-1")
	share := types.UID("share-0")
	r := &c.Status.Allocation.Devices.Results[0]
	r.ShareID = &share
	r.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("300"), apidra.CapacityMemory: resource.MustParse("10Gi")}
	if _, err := k.client.ResourceV1().ResourceClaims("default").UpdateStatus(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ids, errStr := k.prepare(c)
	want := "nvidia.com/gpu=" + n.GPUs[1].UUID + ",gpuplane.io/claim=uid-a-gpu-1"
	if errStr != "" || strings.Join(ids, ",") != want {
		t.Fatalf("prepare: %v %q, want %s", ids, errStr, want)
	}
	path := claimCDISpecPath(k.dirs.CDIDir, c.UID, "gpu-1")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spec cdispec.Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Kind != "gpuplane.io/claim" || len(spec.Devices) != 1 || spec.Devices[0].Name != "uid-a-gpu-1" ||
		strings.Join(spec.Devices[0].ContainerEdits.Env, ",") != "GPUPLANE_GPU_SHARE=300" {
		t.Errorf("claim spec %s", data)
	}
	k.unprepare(c)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("claim spec after unprepare: %v", err)
	}
}

// TestShareEnvMPS: under an MPS configuration the share sets CUDA's MPS
// client limits: 251 milliGPU is 26% of the SMs (rounded up), 20Gi is
// 20480 MiB (of 80Gi, 250 thousandths: less than the 251). A memory share
// (milliGPU's default 1, 40Gi of 80Gi) holds 500 thousandths: 50%.
func TestShareEnvMPS(t *testing.T) {
	pd := PreparedDevice{Device: "gpu-0", GPUUUID: "GPU-a",
		ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("251"), apidra.CapacityMemory: resource.MustParse("20Gi")},
		Config:           &DeviceConfig{Kind: GpuConfigKind, Sharing: &Sharing{Strategy: MPSStrategy}}}
	want := "GPUPLANE_GPU_SHARE=251,CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=26,CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=GPU-a=20480M"
	const gpuMem = 80 << 30
	if got := strings.Join(shareEnv(pd, gpuMem, 0), ","); got != want {
		t.Errorf("shareEnv = %s, want %s", got, want)
	}
	mem := pd
	mem.ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{apidra.CapacityMilliGPU: resource.MustParse("1"), apidra.CapacityMemory: resource.MustParse("40Gi")}
	if got, want := strings.Join(shareEnv(mem, gpuMem, 0), ","), "GPUPLANE_GPU_SHARE=500,CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50,CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=GPU-a=40960M"; got != want {
		t.Errorf("memory share: %s, want %s", got, want)
	}
	pd.Config.Sharing.Strategy = TimeSlicingStrategy
	if got := strings.Join(shareEnv(pd, gpuMem, 0), ","); got != "GPUPLANE_GPU_SHARE=251" {
		t.Errorf("time-slicing: %s", got)
	}
	delete(pd.ConsumedCapacity, apidra.CapacityMilliGPU)
	if got := shareEnv(pd, gpuMem, 0); got != nil {
		t.Errorf("no milliGPU: %v, want none", got)
	}
}

// TestPrepareStatic: GPU 0 in MIG mode with a 3g.40gb made outside DRA
// (the mock profile's layout; gpu.PlaceMIG puts it at the first start of
// 3g.40gb, slot 0). It is published as it is, gpu-0-mig-3g40gb-9-0 with
// its UUID, and the placements over slots 0..3 are not: left are 1g.10gb
// and 1g.10gb+me at 4..6 (6), 1g.20gb at 4 and 6 (2), 2g.20gb at 4 and
// 3g.40gb at 4 (2): 10, with the static one and gpu-1 12 devices. A claim of it is given
// nvidia.com/gpu=<its UUID>, no MIG device is created; a second claim is
// refused; after a restart it is published and prepared the same; on
// unprepare it stays.
func TestPrepareStatic(t *testing.T) {
	b, n := mockNode(t, strings.Replace(twoA100, "    migEnabled: true\n", "    migEnabled: true\n    mig: [3g.40gb]\n", 1))
	k := newKubelet(t)
	d := k.start(b)
	devs, _ := k.slices(2)
	g0 := n.GPUs[0].UUID
	mig := n.GPUs[0].MIG[0].UUID
	st := devs["gpu-0-mig-3g40gb-9-0"]
	if len(devs) != 12 || str(st.Attributes["uuid"]) != mig || st.ConsumesCounters != nil {
		t.Fatalf("published %d devices (want 12), static %+v", len(devs), st)
	}
	if _, ok := devs["gpu-0-mig-1g10gb-19-3"]; ok {
		t.Error("a placement over the static device is published")
	}
	c := k.claim("s", "gpu-0-mig-3g40gb-9-0")
	ids, errStr := k.prepare(c)
	if errStr != "" || strings.Join(ids, ",") != "nvidia.com/gpu="+mig {
		t.Fatalf("prepare: %v %q, want nvidia.com/gpu=%s", ids, errStr, mig)
	}
	if got := liveMIG(t, b, g0); strings.Join(got, ",") != "3g.40gb@0" {
		t.Errorf("live MIG devices %v, want the one 3g.40gb@0", got)
	}
	if pd := d.Prepared()["uid-s"].Devices[0]; pd.StaticMIG != mig || pd.MIG != nil {
		t.Errorf("recorded %+v", pd)
	}
	if _, errStr := k.prepare(k.claim("s2", "gpu-0-mig-3g40gb-9-0")); !strings.Contains(errStr, "already prepared for claim uid-s") {
		t.Errorf("a second claim: %q", errStr)
	}
	d.Stop()
	k.start(b)
	if devs, _ := k.slices(2); str(devs["gpu-0-mig-3g40gb-9-0"].Attributes["uuid"]) != mig {
		t.Error("after the restart the static device is not published as it is")
	}
	if ids2, _ := k.prepare(c); strings.Join(ids2, ",") != strings.Join(ids, ",") {
		t.Errorf("prepare after restart: %v, want %v", ids2, ids)
	}
	k.unprepare(c)
	if got := liveMIG(t, b, g0); strings.Join(got, ",") != "3g.40gb@0" {
		t.Errorf("live MIG devices after unprepare %v, want the 3g.40gb@0 still", got)
	}
	if _, err := os.Stat(cdiSpecPath(k.dirs.CDIDir, mig)); !os.IsNotExist(err) {
		t.Errorf("CDI spec of the static device after unprepare: %v", err)
	}
}
