// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"fmt"

	"github.com/gpuplane/gpuplane/api/metrics"
	"github.com/gpuplane/gpuplane/api/resource"
	"github.com/gpuplane/gpuplane/internal/gpu"
)

// The vendors' exporters' series read. Where one names a pod, the pod's
// device-hours and utilisation come from it, as an NVIDIA pod's come from
// the node agent's share series and DCGM's utilisation; at the other
// steps the pod's requests price it (vendor.go).
//
// AMD's device-metrics-exporter (github.com/ROCm/device-metrics-exporter
// at afd0fe81cfb1a36cf15e79edb057e92adb197946): every GPU series carries
// gpu_id, serial_number, card_model, hostname, gpu_partition_id,
// gpu_compute_partition_type, gpu_memory_partition_type, pod, namespace
// and container, "always set and cannot be removed"
// (pkg/amdgpu/gpuagent/gpuagent_gpu_metrics.go, gpuMandatoryLables;
// docs/configuration/configmap.md). pod, namespace and container name
// the container that the kubelet's pod-resources API says holds the GPU,
// through AMD's device plugin (amd.com/...) or DRA driver (gpu.amd.com),
// and are empty for a GPU no pod holds (pkg/exporter/scheduler/k8s.go,
// ListWorkloads). A GPU is one partition of a device in its partition
// mode; gpu_id is unique on the node.
//
// Intel Gaudi's metric exporter, the Intel Gaudi base operator's
// "Prometheus Metric Exporter" DaemonSet (github.com/HabanaAI/
// gaudi-metric-exporter at 2d50e442aff7021eacd4bac8d4c23bf69e674fb3,
// release 1.24.0-1007): every device series carries Serial, UUID,
// device, id, fit, spi, driver, pod_namespace and pod_name (exporter.go,
// getMetricLabels); the pod is the one the kubelet's pod-resources API
// gives for the device's serial number, the device plugin's device ID
// (kube.go, GetKubeDeviceMetadata), empty for a device no pod holds. Its
// series name no node: a scrape that relabels
// __meta_kubernetes_pod_node_name to node gives one.
const (
	// AMDTotalVRAM is a GPU's memory in MB (GPU_TOTAL_VRAM, exported for
	// every partition: docs/configuration/metricslist.md): it tells which
	// GPUs there are and which pod holds each.
	AMDTotalVRAM = "gpu_total_vram"
	// AMDGFXActivity is the graphics engine's use, "in Percentage
	// (0-100)"; in the partitioned modes "applicable for primary
	// partition (partition_id=0); amdsmi does not return per-partition
	// activity data" (metricslist.md), so it is read for unpartitioned
	// GPUs only.
	AMDGFXActivity = "gpu_gfx_activity"
	// GaudiUtilization is a device's "Utilization of the device"
	// (samples.go), hlml's AIP utilisation (rhlml/hlml/src/device.rs,
	// utilization_info), read in percent, 0 to 100, as hl-smi shows it:
	// it tells which devices there are, which pod holds each, and how
	// busy each is.
	GaudiUtilization = "habanalabs_utilization"
)

// The exporters' labels read.
const (
	amdNode, amdGPUID, amdModel = "hostname", "gpu_id", "card_model"
	amdCompute, amdMemory       = "gpu_compute_partition_type", "gpu_memory_partition_type"
	gaudiSerial, gaudiUUID      = "Serial", "UUID"
	gaudiPod, gaudiNamespace    = "pod_name", "pod_namespace"
	gaudiNode                   = "node"
	exportedPod, exportedNS     = "exported_pod", "exported_namespace"
)

// exporterDevice is the GPU an exporter series names, as the node agent
// would label it: uuid ("amd:NODE:GPU_ID", "gaudi:SERIAL"), node, catalog
// model, partition mode, and the holding pod (empty: none).
type exporterDevice struct {
	uuid, node, model string
	part              gpu.Partition
	ns, pod           string
}

// addExporter takes a series of a vendor's exporter, relabelled as the
// node agent's (addSeries): the GPU lives while the series has values;
// its utilisation is that of DCGM_FI_DEV_GPU_UTIL, in percent
// (AMDGFXActivity of an unpartitioned GPU, GaudiUtilization); and where
// an AMDTotalVRAM or GaudiUtilization series names a pod, the pod holds
// the GPU whole at each step with a value, as a share series of 1 says
// (addShare), and those steps are the exporter's (b.named), not the
// pod's requests'. A series whose GPU or model cannot be told is left
// out, with a warning.
func (b *builder) addExporter(metric, key string, l map[string]string, t []int64, v []float64) error {
	var d exporterDevice
	var ok bool
	if metric == GaudiUtilization {
		d, ok = b.gaudiDevice(l)
	} else {
		d, ok = b.amdDevice(l)
	}
	if !ok {
		return nil
	}
	nl := make(map[string]string, len(l)+5)
	for k, x := range l {
		nl[k] = x
	}
	nl[metrics.LabelUUID], nl[metrics.LabelHostname], nl[metrics.LabelModelName] = d.uuid, d.node, d.model
	nl[metrics.LabelNamespace], nl[metrics.LabelPod] = d.ns, d.pod
	b.parts[d.uuid] = d.part
	as := metric // the GPU's life only
	if metric == GaudiUtilization || metric == AMDGFXActivity && (d.part.Compute == "" || d.part.Compute == "SPX") {
		as = metrics.DCGMDevGPUUtil
	}
	if err := b.addSeries(as, key, nl, t, v); err != nil {
		return err
	}
	if metric == AMDGFXActivity || d.ns == "" || d.pod == "" {
		return nil
	}
	steps := b.named[d.ns+"/"+d.pod]
	if steps == nil {
		steps = map[int64]bool{}
		b.named[d.ns+"/"+d.pod] = steps
	}
	ones := make([]float64, len(t))
	for i, x := range t {
		ones[i] = 1
		steps[b.w.index(x)] = true
	}
	return b.addShare("exporter\x00"+metric+"\x00"+key, key, nl, b.gpus[d.uuid], t, ones)
}

// amdDevice returns the GPU of an AMD exporter series: hostname and
// gpu_id; the model of the node's kube-state-metrics labels (vendor.go),
// else card_model's catalog model; the partition mode of
// gpu_compute_partition_type and gpu_memory_partition_type ("cpx",
// "nps1"), else the node's, a mode the model lacks read as none. A
// series scraped without honor_labels has the exporter's pod labels as
// exported_pod and exported_namespace (Prometheus renames a scraped label
// that a target label of the same name overrides); they are read there.
func (b *builder) amdDevice(l map[string]string) (exporterDevice, bool) {
	d := exporterDevice{node: l[amdNode], ns: l[metrics.LabelNamespace], pod: l[metrics.LabelPod]}
	if p, ok := l[exportedPod]; ok {
		d.ns, d.pod = l[exportedNS], p
		b.warn(fmt.Sprintf("%s series carry %s: scraped without honor_labels, so a GPU no pod holds carries the exporter's own pod as pod, read as held by it; AMD's chart sets honorLabels: true", AMDTotalVRAM, exportedPod))
	}
	if d.node == "" || l[amdGPUID] == "" {
		b.warn(fmt.Sprintf("AMD exporter series without %s or %s: not placed on any GPU", amdNode, amdGPUID))
		return d, false
	}
	d.uuid = "amd:" + d.node + ":" + l[amdGPUID]
	n := b.vendorNodes[d.node]
	d.model, d.part = n.model, n.part
	if m, ok := b.cat.FromProductName(l[amdModel]); d.model == "" && ok && m.Vendor == gpu.AMD {
		d.model = m.Name
	}
	if d.model == "" {
		b.warn(fmt.Sprintf("AMD GPU %s: card_model %q is not in the catalog and kube-state-metrics labels no model of node %s: not read", d.uuid, l[amdModel], d.node))
		return d, false
	}
	if c, m := l[amdCompute], l[amdMemory]; c != "" && m != "" {
		if p, err := gpu.ParsePartition(c + "_" + m); err == nil {
			d.part = p
		}
	}
	if _, err := gpu.Partitions(d.model, d.part); err != nil {
		d.part = gpu.Partition{}
	}
	return d, true
}

// gaudiDevice returns the device of a Gaudi exporter series: its Serial
// (else UUID); the model of its node's kube-state-metrics labels, the node
// being the series' node label, else, for a held device, the node of the
// holder's habana.ai/gaudi request.
func (b *builder) gaudiDevice(l map[string]string) (exporterDevice, bool) {
	d := exporterDevice{node: l[gaudiNode], ns: l[gaudiNamespace], pod: l[gaudiPod]}
	id := l[gaudiSerial]
	if id == "" {
		id = l[gaudiUUID]
	}
	if id == "" {
		b.warn(fmt.Sprintf("%s series without %s or %s: not placed on any device", GaudiUtilization, gaudiSerial, gaudiUUID))
		return d, false
	}
	d.uuid = "gaudi:" + id
	if n, ok := b.vendorNodes[d.node]; ok && d.node != "" {
		d.model = n.model
	} else if d.pod != "" {
		d.node, d.model = b.requestNode(d.ns, d.pod, resource.Gaudi)
	}
	if d.model == "" {
		b.warn(fmt.Sprintf("Gaudi device %s: no node label (relabel __meta_kubernetes_pod_node_name to node) of a node whose model kube-state-metrics labels, nor a request of its pod: not read", id))
		return d, false
	}
	return d, true
}

// requestNode returns the node of a pod's request of resource res and
// the node's model, as kube-state-metrics gives them; "" when none.
func (b *builder) requestNode(ns, pod, res string) (node, model string) {
	for _, r := range b.requests {
		if r.ns == ns && r.pod == pod && r.res == res {
			if n, ok := b.vendorNodes[r.node]; ok {
				return r.node, n.model
			}
		}
	}
	return "", ""
}
