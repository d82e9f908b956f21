// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/deviceattribute"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
	cdispec "tags.cncf.io/container-device-interface/specs-go"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/drametrics"
	"github.com/gpuplane/gpuplane/internal/node/health"
	"github.com/gpuplane/gpuplane/internal/placement"
)

// Defaults of Config.
var (
	DefaultPluginDir    = filepath.Join(kubeletplugin.KubeletPluginsDir, apidra.DriverName)
	DefaultRegistrarDir = kubeletplugin.KubeletRegistryDir
)

// checkpointFile is the checkpoint's name in Config.PluginDir.
const checkpointFile = "checkpoint.json"

// Config configures the plugin.
type Config struct {
	// NodeName is this node's name: the ResourceSlices' node and pool.
	NodeName string
	// KubeClient publishes the ResourceSlices and reads the claims.
	KubeClient kubernetes.Interface
	// PluginDir holds the plugin's socket (dra.sock) and its checkpoint
	// (default DefaultPluginDir).
	PluginDir string
	// RegistrarDir is the kubelet's plugin registration directory
	// (default DefaultRegistrarDir).
	RegistrarDir string
	// CDIDir, when set, is where a CDI spec is written for each prepared
	// device (DefaultCDIDir is the runtimes' transient directory). Empty:
	// none, the specs of NVIDIA's container toolkit (nvidia-ctk cdi
	// generate) define the devices.
	CDIDir string
	// MIGMinorsPath is the NVIDIA driver's MIG capability table
	// (DefaultMIGMinorsPath on nvml), read for the capability device
	// nodes of each MIG device's CDI spec; a MIG device missing from it
	// fails its prepare. Empty: MIG devices' specs get no capability
	// nodes (the mock backend, whose devices need none).
	MIGMinorsPath string
	// ToolkitSpec, with CDIDir, is NVIDIA's container toolkit's CDI spec
	// of the node's GPUs (e.g. /var/run/cdi/nvidia.yaml), read at each
	// prepare: a device it names by UUID is given by that name and gets
	// no spec of the plugin's (two specs of one name in one directory are
	// a conflict the runtime refuses); any other gets the plugin's spec
	// with the edits common to the toolkit's devices (driver libraries,
	// hooks), and those of the toolkit's device for it under an index name
	// (toolkitIndexed). Empty or missing: the plugin's specs alone.
	ToolkitSpec string
	// DriverEdits, with CDIDir, are the container edits every device's
	// spec gets when ToolkitSpec gives none: the driver's libraries,
	// binaries, IPC sockets, control nodes and NVIDIA's hooks, from
	// nvcdi (gpucdi.DriverEdits). Nil: none, the spec has the device
	// nodes alone (the mock backend's default).
	DriverEdits *cdispec.ContainerEdits
	// DevRoot is where the host's device nodes are, the spec's host
	// paths (gpucdi.DevRoot of the driver root); "" or "/": /dev.
	DevRoot string
	// LocalDevRoot is where the plugin sees DevRoot: when set, the specs
	// list only the control nodes present there (gpucdi.Device).
	LocalDevRoot string
	// Shares publishes GPUs without MIG as shareable (Options.Shares).
	Shares bool
	// ShareMode is how shared GPUs are published (Options.ShareMode).
	ShareMode ShareMode
	// PCIeRoot resolves the pcieRoot attribute (Options.PCIeRoot);
	// default: from sysfs (deviceattribute).
	PCIeRoot func(busID string) (string, error)
	// MPSControl is the MPS control program (default DefaultMPSControl,
	// looked up on PATH), run for claims under an MPS configuration.
	MPSControl string
	// IgnoredXIDs are the application XIDs the health policy ignores
	// (internal/node/health); nil: configv1.DefaultIgnoredXIDs.
	IgnoredXIDs []uint64
	// RediscoverInterval is how often Run discovers the GPUs again
	// (Rediscover); 0: never, the devices are those found at start.
	RediscoverInterval time.Duration
	// BootIDPath is the file of the node's boot ID (default
	// DefaultBootIDPath): the checkpoint records it, and claims prepared
	// under another one were prepared before a reboot (checkBoot). A
	// missing, unreadable or empty file fails New.
	BootIDPath string
	// Metrics, when set, records each claim's prepare and unprepare and
	// the prepared devices, as NVIDIA's DRA driver does (drametrics).
	Metrics *drametrics.Metrics
	// OnRediscover, when set, is called by Run with the GPUs found after
	// each rediscovery that changed the published devices (the node
	// agent writes its labels again). It must not call the Driver's
	// Rediscover.
	OnRediscover func(context.Context, device.Node)
	// Rank, when set, orders the MIG devices as the placement core ranks
	// them against this target workload (Options.Rank), ranked again
	// after each prepare and unprepare (reorder). Nil: the table's order.
	Rank *placement.TargetWorkload
}

// Driver is the DRA kubelet plugin of one node. Its methods are safe for
// concurrent use.
type Driver struct {
	cfg     Config
	backend device.Backend
	mig     device.MIGManager // nil: the backend creates no MIG devices

	mu        sync.Mutex
	node      device.Node
	res       Resources
	outside   map[string][]device.MIGInstance // Options.Static of res
	publishes int                             // calls of publish that handed devices to the helper
	cp        *Checkpoint
	helper    *kubeletplugin.Helper
	health    *health.State
	unhealthy map[string]device.HealthEvent // by GPU or MIG device UUID: the event that tainted it
	changed   chan struct{}                 // closed and replaced on each taint change (WatchHealthStatus)

	sharesMu sync.RWMutex
	shares   map[shareKey]float64 // ClaimShare's copy of the checkpoint
}

var _ kubeletplugin.DRAPlugin = (*Driver)(nil)

// New returns the plugin of backend b's node: it discovers the GPUs,
// builds the ResourceSlice content and loads the checkpoint. MIG-enabled
// GPUs are published only when b creates MIG devices (device.MIGManager).
func New(ctx context.Context, b device.Backend, cfg Config) (*Driver, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("dra: the node name is required")
	}
	if cfg.PluginDir == "" {
		cfg.PluginDir = DefaultPluginDir
	}
	if cfg.RegistrarDir == "" {
		cfg.RegistrarDir = DefaultRegistrarDir
	}
	if cfg.PCIeRoot == nil {
		cfg.PCIeRoot = sysfsPCIeRoot
	}
	if err := os.MkdirAll(cfg.PluginDir, 0o750); err != nil {
		return nil, fmt.Errorf("dra: plugin directory: %w", err)
	}
	d := &Driver{cfg: cfg, backend: b}
	d.mig, _ = b.(device.MIGManager)
	n, err := b.Discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("dra: %w", err)
	}
	if d.cp, err = loadCheckpoint(d.checkpointPath()); err != nil {
		return nil, err
	}
	if err := d.checkBoot(ctx); err != nil {
		return nil, fmt.Errorf("dra: %w", err)
	}
	var f found
	if d.res, f, err = d.resources(ctx, n); err != nil {
		return nil, fmt.Errorf("dra: %w", err)
	}
	f.log()
	f.logHalfMade()
	d.node, d.outside = n, f.static
	d.publishShares()
	d.countPrepared()
	ignored := cfg.IgnoredXIDs
	if ignored == nil {
		ignored = configv1.DefaultIgnoredXIDs
	}
	d.logMPSControl()
	d.health = health.NewState(device.Node{GPUs: n.GPUs}, ignored)
	d.unhealthy = map[string]device.HealthEvent{}
	d.changed = make(chan struct{})
	for _, ev := range n.Faults {
		d.applyHealth(ev)
	}
	for _, g := range n.GPUs {
		if g.MIGEnabled && d.mig == nil {
			klog.InfoS("Not publishing a MIG-enabled GPU: the backend creates no MIG devices", "gpu", g.UUID)
		}
	}
	return d, nil
}

// awaited reports whether an interrupted prepare recorded a MIG device
// at in's placement without recording its UUID: the next prepare or
// unprepare of that claim adopts it.
func (d *Driver) awaited(gpuUUID string, in device.MIGInstance) bool {
	for _, pc := range d.cp.Claims {
		if pc.PreBoot {
			continue // nothing it made survived the reboot
		}
		for _, pd := range pc.Devices {
			if m := pd.MIG; m != nil && m.UUID == "" && pd.GPUUUID == gpuUUID && m.GIProfile == in.GIProfile && m.Start == in.Placement.Start {
				return true
			}
		}
	}
	return false
}

// static returns the live MIG devices made outside DRA, by GPU UUID: all
// but those a claim's prepare created, and the GPU instances without a
// compute instance (found.log logs them).
func (d *Driver) static(ctx context.Context, n device.Node) (map[string][]device.MIGInstance, error) {
	if d.mig == nil {
		return nil, nil
	}
	out := map[string][]device.MIGInstance{}
	for _, g := range n.GPUs {
		if !g.MIGEnabled {
			continue
		}
		live, err := d.mig.MIGInstances(ctx, g.UUID)
		if err != nil {
			return nil, err
		}
		for _, in := range live {
			// A GPU instance without a compute instance is nobody's: its
			// placement is taken, and it is not published (Build).
			if !in.NoComputeInstance && (in.ComputeInstanceID != 0 || d.ownedMIG(in.UUID, "") || d.awaited(g.UUID, in)) {
				continue
			}
			out[g.UUID] = append(out[g.UUID], in)
		}
	}
	return out, nil
}

// found is what resources found of node n beyond its GPUs: the live
// MIG devices made outside DRA and the MIG placements the GPUs offer.
type found struct {
	n      device.Node
	static map[string][]device.MIGInstance
	offers map[string]device.MIGOffer
}

// log logs the MIG devices made outside DRA that are published, and
// where the GPUs' MIG placements differ from the MIG table (OfferDiff), once per
// GPU model.
func (f found) log() {
	for gpu, ins := range f.static {
		for _, in := range ins {
			if !in.NoComputeInstance {
				klog.InfoS("A MIG device made outside DRA: published as it is, its placement's others not", "gpu", gpu, "mig", in.UUID, "profile", in.Profile, "start", in.Placement.Start)
			}
		}
	}
	seen := map[string]bool{}
	for _, g := range f.n.GPUs {
		off := f.offers[g.UUID]
		if off == nil || seen[g.Model] { // nil: not asked, or no MIG mode
			continue
		}
		seen[g.Model] = true
		for _, line := range OfferDiff(g.Model, off) {
			klog.InfoS("The GPU's MIG placements and the MIG table's differ: only those of both are published", "gpu", g.UUID, "model", g.Model, "difference", line)
		}
	}
}

// logHalfMade logs each GPU instance without a compute instance: a
// crash between NVML's two creations, or an administrator, left it. It
// holds no MIG device a claim could be given, so neither it nor any
// placement it overlaps is published; destroying it (nvidia-smi mig -dgi)
// frees them at the next rediscovery.
func (f found) logHalfMade() {
	for gpu, ins := range f.static {
		for _, in := range ins {
			if in.NoComputeInstance {
				klog.InfoS("A GPU instance without a compute instance: not published, nor the placements it overlaps; destroy it to free them", "gpu", gpu, "gpuInstance", in.GPUInstanceID, "profile", in.GIProfile, "start", in.Placement.Start, "size", in.Placement.Size)
			}
		}
	}
}

// resources builds what the plugin publishes for node n, with n's live
// MIG devices made outside DRA and the placements its GPUs offer; the
// checkpoint is loaded.
func (d *Driver) resources(ctx context.Context, n device.Node) (Resources, found, error) {
	opts := d.options()
	var err error
	if opts.Static, err = d.static(ctx, n); err != nil {
		return Resources{}, found{}, err
	}
	opts.Offers = d.offers(ctx, n)
	res, err := Build(n, opts)
	return res, found{n: n, static: opts.Static, offers: opts.Offers}, err
}

// offers returns what each MIG-enabled GPU of n offers (MIGOffers); a
// GPU that cannot be asked is left out, logged: the table's placements
// are published for it, and a prepare NVML refuses fails with NVML's
// error.
func (d *Driver) offers(ctx context.Context, n device.Node) map[string]device.MIGOffer {
	out, err := MIGOffers(ctx, d.mig, n)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Asking the GPUs which MIG placements they list; publishing the MIG table's for those")
	}
	return out
}

// MIGOffers asks each MIG-enabled GPU of n what it offers, by UUID, when
// b can tell (device.MIGOfferer); nil otherwise. The GPUs that fail are
// left out of the map and their errors joined.
func MIGOffers(ctx context.Context, b any, n device.Node) (map[string]device.MIGOffer, error) {
	o, ok := b.(device.MIGOfferer)
	if !ok {
		return nil, nil
	}
	out := map[string]device.MIGOffer{}
	var errs []error
	for _, g := range n.GPUs {
		if !g.MIGEnabled {
			continue
		}
		off, err := o.MIGOffer(ctx, g.UUID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[g.UUID] = off
	}
	return out, errors.Join(errs...)
}

func (d *Driver) options() Options {
	return Options{Shares: d.cfg.Shares, ShareMode: d.cfg.ShareMode, MIG: d.mig != nil, PCIeRoot: d.cfg.PCIeRoot, Rank: d.cfg.Rank, Held: d.held()}
}

// held returns the MIG devices of the claims recorded, by GPU UUID
// (Options.Held): those prepared, being prepared, and those prepared
// before the node's reboot, which the allocator still counts allocated
// and their next prepare makes again. d.mu is held.
func (d *Driver) held() map[string][]PreparedMIG {
	out := map[string][]PreparedMIG{}
	for _, pc := range d.cp.Claims {
		for _, pd := range pc.Devices {
			if pd.MIG != nil {
				out[pd.GPUUUID] = append(out[pd.GPUUUID], *pd.MIG)
			}
		}
	}
	return out
}

func (d *Driver) checkpointPath() string { return filepath.Join(d.cfg.PluginDir, checkpointFile) }

// sysfsPCIeRoot reads the PCIe root complex of a bus ID from sysfs.
func sysfsPCIeRoot(busID string) (string, error) {
	a, err := deviceattribute.GetPCIeRootAttributeByPCIBusID(busID)
	if err != nil || a.Value.StringValue == nil {
		return "", err
	}
	return *a.Value.StringValue, nil
}

// Start registers the plugin with the kubelet, serves its DRA gRPC
// service and publishes the ResourceSlices; opts are passed on to
// kubeletplugin.Start after the plugin's own (tests set listeners).
func (d *Driver) Start(ctx context.Context, opts ...kubeletplugin.Option) error {
	all := append([]kubeletplugin.Option{
		kubeletplugin.DriverName(apidra.DriverName),
		kubeletplugin.NodeName(d.cfg.NodeName),
		kubeletplugin.KubeClient(d.cfg.KubeClient),
		kubeletplugin.PluginDataDirectoryPath(d.cfg.PluginDir),
		kubeletplugin.RegistrarDirectoryPath(d.cfg.RegistrarDir),
	}, opts...)
	h, err := kubeletplugin.Start(ctx, d, all...)
	if err != nil {
		return fmt.Errorf("dra: %w", err)
	}
	d.mu.Lock()
	d.helper = h
	err = d.publish(ctx)
	d.mu.Unlock()
	if err != nil {
		h.Stop()
		return fmt.Errorf("dra: %w", err)
	}
	klog.InfoS("Serving GPUs through DRA", "driver", apidra.DriverName, "devices", len(d.res.Devices), "socket", filepath.Join(d.cfg.PluginDir, "dra.sock"))
	return nil
}

// Stop stops the gRPC servers and the ResourceSlice publication; the
// slices stay (the kubelet deletes them when the plugin is gone for
// good).
func (d *Driver) Stop() {
	d.mu.Lock()
	h := d.helper
	d.helper = nil
	d.mu.Unlock()
	if h != nil {
		h.Stop()
	}
}

// DriverResources returns what the plugin publishes: one pool named after
// the node.
func (d *Driver) DriverResources() resourceslice.DriverResources {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.driverResources()
}

// driverResources is DriverResources; d.mu is held.
func (d *Driver) driverResources() resourceslice.DriverResources {
	return resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{d.cfg.NodeName: d.tainted().Pool()}}
}

// publish hands what the plugin publishes now to the ResourceSlice
// controller, which writes the slices that differ; nothing before Start.
// Every publication goes through it (Start, ApplyHealth, Rediscover,
// reorder). d.mu is held, so that the last devices handed over are the
// latest.
func (d *Driver) publish(ctx context.Context) error {
	if d.helper == nil {
		return nil
	}
	d.publishes++
	return d.helper.PublishResources(ctx, d.driverResources())
}

// reorder ranks the MIG devices again against the claims recorded now
// (Config.Rank; orderMIG) and, when their order changed, publishes it:
// at most one publication per prepare or unprepare call (the controller
// updates the slices whose devices moved). Between the allocator's choice of a placement and its
// claim's prepare, another claim on the node still sees the order before
// it (docs/dra.md). d.mu is held.
func (d *Driver) reorder(ctx context.Context) {
	if d.cfg.Rank == nil || d.mig == nil {
		return
	}
	devs := orderMIG(d.res.Devices, d.res.Entries, d.node, rankMIG(d.cfg.Rank, d.node, d.outside, d.held()))
	if sameOrder(devs, d.res.Devices) {
		return
	}
	d.res.Devices = devs
	if err := d.publish(ctx); err != nil {
		klog.FromContext(ctx).Error(err, "Republishing the MIG devices in their new order")
	}
}

// HandleError logs errors of the background work (ResourceSlice
// publication); all of them are retried.
func (d *Driver) HandleError(ctx context.Context, err error, msg string) {
	klog.FromContext(ctx).Error(err, msg)
}

// PrepareResourceClaims prepares each claim's devices of this driver:
// the CDI device of a whole GPU; a MIG device created at its placement.
// A claim prepared before (this process or one before it, by the
// checkpoint) gets the same devices again.
func (d *Driver) PrepareResourceClaims(ctx context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, c := range claims {
		done := d.cfg.Metrics.Start(drametrics.Prepare)
		devs, err := d.prepare(ctx, c)
		done(err, drametrics.ErrPrepareDevices)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Preparing claim", "claim", klog.KObj(c), "uid", c.UID)
		}
		out[c.UID] = kubeletplugin.PrepareResult{Err: err, Devices: devs}
	}
	d.publishShares()
	d.countPrepared()
	d.reorder(ctx)
	return out, nil
}

// prepare prepares one claim in steps (prepare.go); d.mu is held. A
// step that fails rolls back what the claim holds (rollback), so that a
// failed prepare leaves nothing held and unprepare nothing to undo. A
// claim prepared before the node's reboot (PreBoot) is prepared anew from
// its allocation: its MIG devices made again, its CDI specs written
// again; where that fails the error says so.
func (d *Driver) prepare(ctx context.Context, c *resourceapi.ResourceClaim) (_ []kubeletplugin.Device, err error) {
	prev, recorded := d.cp.Claims[c.UID]
	stale := recorded && prev.PreBoot
	if recorded && !stale && prev.State == PrepareCompleted {
		return result(prev), nil
	}
	interrupted := recorded && !stale
	if stale {
		prev = nil // nothing of it outlived the reboot
		defer func() {
			if err != nil {
				err = fmt.Errorf("claim %s/%s was prepared before the node's reboot and cannot be prepared again: %w", c.Namespace, c.Name, err)
			}
		}()
	}
	defer func() {
		if err != nil {
			d.rollback(ctx, c.UID, interrupted)
		}
	}()
	pc, err := d.planClaim(ctx, c, prev)
	if err != nil {
		return nil, err
	}
	if stale {
		if err := d.forgetStale(ctx, c.UID, d.cp.Claims[c.UID]); err != nil {
			return nil, err
		}
	}
	// Recorded before anything is created: a restart finds it.
	d.cp.Claims[c.UID] = pc
	if err := d.cp.save(d.checkpointPath()); err != nil {
		return nil, err
	}
	if err := d.createClaimMIG(ctx, c.UID, pc); err != nil {
		return nil, err
	}
	if err := d.startClaimMPS(ctx, c.UID, pc); err != nil {
		return nil, err
	}
	if err := d.writeClaimCDI(c.UID, pc); err != nil {
		return nil, err
	}
	pc.State = PrepareCompleted
	if err := d.cp.save(d.checkpointPath()); err != nil {
		pc.State = PrepareStarted
		return nil, err
	}
	return result(pc), nil
}

// conflict says which other claim holds device name, or a device that
// overlaps it (the whole GPU and a MIG device of it); a shared device
// is held by several claims, and admin access holds nothing.
func (d *Driver) conflict(name string, e Entry, self types.UID) (string, bool) {
	for uid, pc := range d.cp.Claims {
		if uid == self {
			continue
		}
		for _, pd := range pc.Devices {
			if pd.AdminAccess {
				continue
			}
			o, ok := d.res.Entries[pd.Device]
			switch {
			case pd.Device == name && !e.Shared:
				return fmt.Sprintf("already prepared for claim %s", uid), true
			case ok && o.GPU == e.GPU && pd.Device != name && (o.MIG == nil || e.MIG == nil):
				return fmt.Sprintf("its GPU's %s is prepared for claim %s", pd.Device, uid), true
			}
		}
	}
	return "", false
}

// createMIG makes sure pd's MIG device exists: the one recorded if it is
// still live, else a live one at the placement that no other claim
// holds (created by an interrupted prepare), else a new one.
func (d *Driver) createMIG(ctx context.Context, self types.UID, pd *PreparedDevice) error {
	if d.mig == nil {
		return errors.New("the backend creates no MIG devices")
	}
	live, err := d.mig.MIGInstances(ctx, pd.GPUUUID)
	if err != nil {
		return err
	}
	m := pd.MIG
	if m.UUID != "" && slices.ContainsFunc(live, func(in device.MIGInstance) bool { return in.UUID == m.UUID }) {
		return nil
	}
	m.GPUInstanceID, m.ComputeInstanceID, m.UUID = 0, 0, ""
	if adoptMIG(live, m, func(uuid string) bool { return d.ownedMIG(uuid, self) }) {
		klog.FromContext(ctx).Info("Adopted a MIG device created before", "device", pd.Device, "mig", m.UUID)
		return nil
	}
	in, err := d.mig.CreateMIG(ctx, pd.GPUUUID, m.GIProfile, m.Start)
	if err != nil {
		return err
	}
	m.GPUInstanceID, m.ComputeInstanceID, m.UUID = in.GPUInstanceID, in.ComputeInstanceID, in.UUID
	klog.FromContext(ctx).Info("Created a MIG device", "device", pd.Device, "mig", in.UUID, "gpuInstance", in.GPUInstanceID)
	return nil
}

// ownedMIG reports whether another claim than self holds the MIG device;
// a claim prepared before the node's reboot holds none (a device of its
// recorded UUID now is another, the mock's UUIDs repeating after one).
func (d *Driver) ownedMIG(uuid string, self types.UID) bool {
	if uuid == "" {
		return false // not created yet: nobody's
	}
	for uid, pc := range d.cp.Claims {
		if uid == self || pc.PreBoot {
			continue
		}
		for _, pd := range pc.Devices {
			if pd.MIG != nil && pd.MIG.UUID == uuid {
				return true
			}
		}
	}
	return false
}

// result is the kubelet's view of a prepared claim.
func result(pc *PreparedClaim) []kubeletplugin.Device {
	out := make([]kubeletplugin.Device, 0, len(pc.Devices))
	for _, pd := range pc.Devices {
		out = append(out, kubeletplugin.Device{Requests: pd.Requests, PoolName: pd.Pool, DeviceName: pd.Device, CDIDeviceIDs: pd.CDIDeviceIDs, ShareID: pd.ShareID})
	}
	return out
}

// UnprepareResourceClaims undoes PrepareResourceClaims: it destroys the
// MIG devices created for the claims and removes their CDI specs once no
// other claim uses them. A claim not prepared is no error.
func (d *Driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]error, len(claims))
	for _, c := range claims {
		done := d.cfg.Metrics.Start(drametrics.Unprepare)
		err := d.unprepare(ctx, c.UID)
		done(err, drametrics.ErrUnprepareDevices)
		if err != nil {
			klog.FromContext(ctx).Error(err, "Unpreparing claim", "claim", c.NamespacedName, "uid", c.UID)
		}
		out[c.UID] = err
	}
	d.publishShares()
	d.countPrepared()
	d.reorder(ctx)
	return out, nil
}

// forgetStale drops the record of claim uid prepared before the node's
// reboot (release: its CDI specs removed, nothing destroyed), so that it
// is prepared anew from its allocation. d.mu is held.
func (d *Driver) forgetStale(ctx context.Context, uid types.UID, pc *PreparedClaim) error {
	klog.FromContext(ctx).Info("Preparing again a claim prepared before the node's reboot", "claim", klog.KRef(pc.Namespace, pc.Name), "uid", uid)
	return d.release(ctx, uid, pc, false)
}

// unprepare undoes one claim (release); d.mu is held.
func (d *Driver) unprepare(ctx context.Context, uid types.UID) error {
	pc, ok := d.cp.Claims[uid]
	if !ok {
		return nil
	}
	return d.release(ctx, uid, pc, true)
}

// createMIGLookup finds the live MIG device an interrupted prepare of
// claim self created for pd, if any, and records it in pd.
func (d *Driver) createMIGLookup(ctx context.Context, self types.UID, pd *PreparedDevice) error {
	if d.mig == nil {
		return nil
	}
	live, err := d.mig.MIGInstances(ctx, pd.GPUUUID)
	if err != nil {
		return err
	}
	adoptMIG(live, pd.MIG, func(uuid string) bool { return d.ownedMIG(uuid, self) })
	return nil
}

// adoptMIG records in m the live MIG device at m's placement that no
// other claim owns, if there is one.
func adoptMIG(live []device.MIGInstance, m *PreparedMIG, owned func(uuid string) bool) bool {
	for _, in := range live {
		if in.GIProfile == m.GIProfile && in.Placement.Start == m.Start && in.ComputeInstanceID == 0 && !in.NoComputeInstance && !owned(in.UUID) {
			m.GPUInstanceID, m.ComputeInstanceID, m.UUID = in.GPUInstanceID, in.ComputeInstanceID, in.UUID
			return true
		}
	}
	return false
}

// cdiInUse reports whether a prepared claim still uses the CDI device of
// uuid.
func (d *Driver) cdiInUse(uuid string) bool {
	for _, pc := range d.cp.Claims {
		for _, pd := range pc.Devices {
			if pd.cdiUUID() == uuid {
				return true
			}
		}
	}
	return false
}

// writeCDI writes the CDI specs of claim uid's device pd (the device's,
// with --cdi-dir; the claim's own, for a share or an MPS daemon) and
// records the CDI device IDs the kubelet is given.
func (d *Driver) writeCDI(uid types.UID, pd *PreparedDevice) error {
	uuid := pd.cdiUUID()
	if d.cfg.CDIDir != "" {
		if err := d.writeDeviceCDI(*pd, uuid); err != nil {
			return fmt.Errorf("device %s: CDI spec: %w", pd.Device, err)
		}
	}
	pd.CDIDeviceIDs = []string{CDIDeviceID(uuid)}
	id, err := writeClaimCDISpec(d.claimCDIDir(), uid, *pd, d.gpuMemBytes(*pd), d.gpuShares(), d.mpsEdits(*pd))
	if err != nil {
		return fmt.Errorf("device %s: the claim's CDI spec: %w", pd.Device, err)
	}
	if id != "" {
		pd.CDIDeviceIDs = append(pd.CDIDeviceIDs, id)
	}
	return nil
}

// writeDeviceCDI writes the spec of pd's CDI device uuid into CDIDir,
// unless the toolkit's spec has a device of that name, with the edits of
// the toolkit's device for it under an index name (toolkitIndexed) and
// those common to the toolkit's devices merged in; without a toolkit
// spec, with DriverEdits. The kubelet is always
// given uuid, never an index name: that is positional, and a toolkit
// spec generated again (after a MIG layout change) may give it to
// another device.
func (d *Driver) writeDeviceCDI(pd PreparedDevice, uuid string) error {
	ts, err := readToolkitSpec(d.cfg.ToolkitSpec)
	if err != nil {
		return err
	}
	if ts != nil && ts.GetDevice(uuid) != nil {
		return nil
	}
	g := d.node.GPUs[d.res.Entries[pd.Device].GPU]
	dev := cdiDevice{UUID: uuid, Minor: g.Minor, DevRoot: d.cfg.DevRoot, LocalDevRoot: d.cfg.LocalDevRoot, Common: d.cfg.DriverEdits}
	in, mig := pd.migInstance()
	if mig && d.cfg.MIGMinorsPath != "" {
		caps, err := readMIGMinors(d.cfg.MIGMinorsPath)
		if err != nil {
			return err
		}
		if dev.CapNodes, err = caps.CapNodes(g.Minor, in.GPUInstanceID, in.ComputeInstanceID); err != nil {
			return err
		}
	}
	if ts != nil {
		dev.Common = &ts.ContainerEdits
		// Without the capability nodes a MIG device cannot be told from
		// its GPU by its nodes.
		if !mig || dev.CapNodes != nil {
			_, dev.Own = toolkitIndexed(ts, dev)
		}
	}
	return writeCDISpec(d.cfg.CDIDir, dev)
}

// checkStatic makes sure the MIG device uuid made outside DRA on GPU
// gpuUUID is still live (it may have been destroyed since it was
// published) and returns its GPU and compute instance.
func (d *Driver) checkStatic(ctx context.Context, gpuUUID, uuid string) (MIGInstance, error) {
	live, err := d.mig.MIGInstances(ctx, gpuUUID)
	if err != nil {
		return MIGInstance{}, err
	}
	for _, in := range live {
		if in.UUID == uuid {
			return MIGInstance{GPUInstanceID: in.GPUInstanceID, ComputeInstanceID: in.ComputeInstanceID}, nil
		}
	}
	return MIGInstance{}, fmt.Errorf("MIG device %s, made outside DRA, is gone", uuid)
}

// Prepared returns the claims' records, for tests and diagnostics.
func (d *Driver) Prepared() map[types.UID]PreparedClaim {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]PreparedClaim, len(d.cp.Claims))
	for uid, pc := range d.cp.Claims {
		out[uid] = *pc
	}
	return out
}
