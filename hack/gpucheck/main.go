// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Command gpucheck looks at this machine's NVIDIA GPUs through the node
// agent's nvml backend, read-only, and prints what the agent would make of
// them: the discovered GPUs, the feature labels, health events for a few
// seconds, one scrape of the metrics, and the ResourceSlices the DRA
// plugin would publish. It changes nothing: no MIG mode, no GPU setting,
// no reset, no file, no API object; it needs no kubelet or cluster.
// hack/gpu-check.sh builds and runs it.
//
//	go run ./hack/gpucheck --seconds 5
//
// Exit status 2: no NVIDIA GPU or driver (NVML does not load); 1: another
// error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/deviceattribute"
	"k8s.io/utils/ptr"

	configv1 "github.com/gpuplane/gpuplane/api/config/v1"
	apidra "github.com/gpuplane/gpuplane/api/dra"
	"github.com/gpuplane/gpuplane/internal/node/device"
	"github.com/gpuplane/gpuplane/internal/node/device/nvml"
	"github.com/gpuplane/gpuplane/internal/node/dra"
	"github.com/gpuplane/gpuplane/internal/node/exporter"
	"github.com/gpuplane/gpuplane/internal/node/labels"
)

// errNoGPU marks the exit of a machine without NVML.
var errNoGPU = errors.New("no NVIDIA GPU/driver found")

func main() {
	seconds := flag.Int("seconds", 5, "how long to watch health events and to sample metrics, in seconds")
	shares := flag.Bool("dra-shares", false, "print the ResourceSlices as --dra-shares publishes them")
	var o extra
	flag.StringVar(&o.facts, "facts", "", "write each GPU's SM count and frame buffer (MiB) as JSON to this file, for hack/gpu-check.sh to compare with nvidia-smi")
	flag.StringVar(&o.mpsDir, "mps-dir", "", "check sharing.mps through the device plugin with a test kubelet on sockets in this directory (needs nvidia-cuda-mps-control)")
	flag.StringVar(&o.draDir, "dra-dir", "", "prepare and unprepare a whole GPU (and with --mps-dir two MPS shares) through the DRA plugin, its checkpoint, daemons and CDI specs in this directory")
	flag.StringVar(&o.driverRoot, "driver-root", "/", "with --dra-dir: the NVIDIA driver's root, whose files the CDI specs get")
	flag.StringVar(&o.specOut, "cdi-spec-out", "", "with --dra-dir: copy the whole GPU's CDI spec here before unprepare (for the cuInit check)")
	flag.StringVar(&o.mpsLoad, "mps-load", "", "with --dra-dir and --mps-dir: hack/gpucheck/mpsload.py, run with python3 (torch) under the MPS shares")
	flag.Parse()
	err := run(os.Stdout, time.Duration(*seconds)*time.Second, *shares, o)
	switch {
	case errors.Is(err, errNoGPU):
		fmt.Fprintf(os.Stderr, "gpucheck: %v\n", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "gpucheck: %v\n", err)
		os.Exit(1)
	}
}

// extra are the checks hack/gpu-check.sh asks for besides the report.
type extra struct {
	facts, mpsDir               string
	draDir, driverRoot, specOut string
	mpsLoad                     string
}

func run(w io.Writer, watch time.Duration, shares bool, o extra) error {
	if watch <= 0 {
		return fmt.Errorf("--seconds %v: must be positive", watch)
	}
	b, err := nvml.Open()
	if err != nil {
		return fmt.Errorf("%w: %v", errNoGPU, err)
	}
	defer b.Close()
	ctx := context.Background()
	n, err := b.Discover(ctx)
	if err != nil {
		return err
	}
	if len(n.GPUs) == 0 {
		return fmt.Errorf("%w: NVML loads (driver %s) but lists no GPU", errNoGPU, n.DriverVersion)
	}
	host, _ := os.Hostname()
	section(w, "Discovered")
	if err := printJSON(w, n); err != nil {
		return err
	}
	section(w, "Feature labels")
	l := labels.Compute(n, labels.OptionsFrom(configv1.DefaultConfig()))
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s=%s\n", k, l[k])
	}
	section(w, fmt.Sprintf("Health events for %v", watch))
	if err := watchHealth(ctx, w, b, watch); err != nil {
		return err
	}
	section(w, fmt.Sprintf("Metrics after sampling for %v", watch))
	if err := scrape(ctx, w, b, host, watch); err != nil {
		return err
	}
	if o.facts != "" {
		section(w, "SM counts and frame buffer (facts for nvidia-smi: "+o.facts+")")
		fs, err := facts(ctx, b, n)
		if err != nil {
			return err
		}
		if err := writeFacts(w, o.facts, fs); err != nil {
			return err
		}
	}
	if o.mpsDir != "" {
		section(w, "MPS through the device plugin (sharing.mps, 2 replicas)")
		if err := checkMPS(ctx, w, b, n, o.mpsDir); err != nil {
			return err
		}
	}
	if o.draDir != "" {
		section(w, "DRA prepare and unprepare (CDI specs with the driver under "+o.driverRoot+")")
		c := draCheck{dir: o.draDir, driverRoot: o.driverRoot, migMinors: dra.DefaultMIGMinorsPath, specOut: o.specOut, mps: o.mpsDir != "", mpsLoad: o.mpsLoad}
		if err := checkDRA(ctx, w, b, n, c); err != nil {
			return err
		}
	}
	section(w, "ResourceSlices (--kubelet-api=dra; live MIG devices published as they are, the placements they overlap or NVML does not list left out, as the plugin does)")
	static, err := liveMIG(ctx, b, n)
	if err != nil {
		return err
	}
	offers, err := migOffers(ctx, w, b, n)
	if err != nil {
		return err
	}
	return printSlices(w, n, host, shares, static, offers)
}

// migOffers returns what n's MIG-enabled GPUs offer (NVML queries only)
// and prints where it differs from the MIG table, as the plugin logs it.
func migOffers(ctx context.Context, w io.Writer, b device.Backend, n device.Node) (map[string]device.MIGOffer, error) {
	offers, err := dra.MIGOffers(ctx, b, n)
	if err != nil {
		return nil, err
	}
	for _, g := range n.GPUs {
		off, ok := offers[g.UUID]
		if !ok {
			continue
		}
		diff := dra.OfferDiff(g.Model, off)
		fmt.Fprintf(w, "GPU %s (%s): NVML lists %v (GPU instance profile constant: starts); %d differences from the MIG table\n", g.UUID, g.Model, off, len(diff))
		for _, line := range diff {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return offers, nil
}

func section(w io.Writer, title string) { fmt.Fprintf(w, "\n== %s\n", title) }

func printJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// watchHealth prints the backend's health events for d.
func watchHealth(ctx context.Context, w io.Writer, b device.Backend, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	ch := make(chan device.HealthEvent, 64)
	done := make(chan error, 1)
	go func() { done <- b.WatchHealth(ctx, ch) }()
	events := 0
	for {
		select {
		case ev := <-ch:
			events++
			fmt.Fprintf(w, "%+v\n", ev)
		case err := <-done:
			if ctx.Err() == nil && err != nil {
				return fmt.Errorf("watching health: %w", err)
			}
			fmt.Fprintf(w, "%d events\n", events)
			return nil
		}
	}
}

// scrape runs the exporter for d and prints one scrape of /metrics.
func scrape(ctx context.Context, w io.Writer, b device.Backend, host string, d time.Duration) error {
	e, err := exporter.New(exporter.Options{Backend: b, Hostname: host})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	<-ctx.Done()
	if err := <-done; err != nil {
		return err
	}
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	_, err = io.Copy(w, rec.Body)
	return err
}

// printSlices prints the ResourceSlices of node n as the DRA plugin
// (kubeletplugin) would write them for node host.
func printSlices(w io.Writer, n device.Node, host string, shares bool, static map[string][]device.MIGInstance, offers map[string]device.MIGOffer) error {
	r, err := dra.Build(n, dra.Options{Shares: shares, MIG: static != nil, Static: static, Offers: offers, PCIeRoot: pcieRoot})
	if err != nil {
		return err
	}
	pool := r.Pool()
	for i, s := range pool.Slices {
		rs := resourceapi.ResourceSlice{
			TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", host, strings.ReplaceAll(apidra.DriverName, ".", "-"), i)},
			Spec: resourceapi.ResourceSliceSpec{
				Driver: apidra.DriverName, NodeName: ptr.To(host),
				Pool:    resourceapi.ResourcePool{Name: host, Generation: 1, ResourceSliceCount: int64(len(pool.Slices))},
				Devices: s.Devices, SharedCounters: s.SharedCounters,
			},
		}
		if err := printJSON(w, rs); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "%d devices in %d slices\n", len(r.Devices), len(pool.Slices))
	return nil
}

// liveMIG returns the live MIG devices of n's MIG-enabled GPUs (NVML
// queries only), which the plugin publishes as static MIG devices; nil
// when b creates no MIG devices.
func liveMIG(ctx context.Context, b device.Backend, n device.Node) (map[string][]device.MIGInstance, error) {
	mm, ok := b.(device.MIGManager)
	if !ok {
		return nil, nil
	}
	out := map[string][]device.MIGInstance{}
	for _, g := range n.GPUs {
		if !g.MIGEnabled {
			continue
		}
		live, err := mm.MIGInstances(ctx, g.UUID)
		if err != nil {
			return nil, err
		}
		for _, in := range live {
			if in.ComputeInstanceID == 0 {
				out[g.UUID] = append(out[g.UUID], in)
			}
		}
	}
	return out, nil
}

// pcieRoot reads a bus ID's PCIe root complex from sysfs, as the plugin.
func pcieRoot(busID string) (string, error) {
	a, err := deviceattribute.GetPCIeRootAttributeByPCIBusID(busID)
	if err != nil || a.Value.StringValue == nil {
		return "", err
	}
	return *a.Value.StringValue, nil
}
