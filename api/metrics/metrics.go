// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package metrics is the one home of the names of the series gpuplane
// serves and reads back: the node agent's exporter
// (internal/node/exporter: dcgm-exporter's DCGM fields, gpuplane's
// per-device series and its own health), `gpuplane cost --serve`
// (internal/cost/export), the admission webhook, the scheduler plugins,
// and their label names, used by the producers and
// by the readers (internal/cost/source, hack/costday) alike, as Kueue's
// pkg/metrics keeps its names in one place. It imports nothing, so that
// the offline tool links it freely. docs/metrics.md describes the series.
package metrics

// The DCGM fields the node agent's exporter serves, under dcgm-exporter's
// names, types and units (deploy/metrics.csv, dcgm-exporter's counters
// file, selects among them). Every series carries the device labels
// (LabelGPU, LabelUUID, LabelPCIBusID, LabelDevice, LabelModelName,
// LabelHostname); a MIG device's series add LabelGPUInstanceProfile and
// LabelGPUInstanceID, a series attributed to a container LabelPod,
// LabelNamespace and LabelContainer (and LabelVGPU for a time-slicing
// replica); DCGMDevXIDErrors adds LabelErrCode and LabelErrMsg.
const (
	// DCGMDevSMClock: SM clock frequency (in MHz); a gauge.
	DCGMDevSMClock = "DCGM_FI_DEV_SM_CLOCK"
	// DCGMDevMemClock: Memory clock frequency (in MHz); a gauge.
	DCGMDevMemClock = "DCGM_FI_DEV_MEM_CLOCK"
	// DCGMDevMemoryTemp: Memory temperature (in C); a gauge.
	DCGMDevMemoryTemp = "DCGM_FI_DEV_MEMORY_TEMP"
	// DCGMDevGPUTemp: GPU temperature (in C); a gauge.
	DCGMDevGPUTemp = "DCGM_FI_DEV_GPU_TEMP"
	// DCGMDevPowerUsage: Power draw (in W); a gauge.
	DCGMDevPowerUsage = "DCGM_FI_DEV_POWER_USAGE"
	// DCGMDevTotalEnergyConsumption: Total energy consumption since the driver
	// was loaded (in mJ); a counter.
	DCGMDevTotalEnergyConsumption = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	// DCGMDevPCIeReplayCounter: Total number of PCIe replays (retries); a
	// counter.
	DCGMDevPCIeReplayCounter = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
	// DCGMDevGPUUtil: GPU utilization (in %); a gauge.
	DCGMDevGPUUtil = "DCGM_FI_DEV_GPU_UTIL"
	// DCGMDevMemCopyUtil: Memory copy utilization (in %); a gauge.
	DCGMDevMemCopyUtil = "DCGM_FI_DEV_MEM_COPY_UTIL"
	// DCGMDevXIDErrors: Value of the last XID error seen (0 for none); a gauge.
	DCGMDevXIDErrors = "DCGM_FI_DEV_XID_ERRORS"
	// DCGMDevFBFree: Frame buffer memory free (in MiB); a gauge.
	DCGMDevFBFree = "DCGM_FI_DEV_FB_FREE"
	// DCGMDevFBUsed: Frame buffer memory used (in MiB); a gauge.
	DCGMDevFBUsed = "DCGM_FI_DEV_FB_USED"
	// DCGMDevECCSBEVolTotal: Total number of single-bit volatile ECC errors; a
	// counter.
	DCGMDevECCSBEVolTotal = "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL"
	// DCGMDevECCDBEVolTotal: Total number of double-bit volatile ECC errors; a
	// counter.
	DCGMDevECCDBEVolTotal = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"
	// DCGMDevECCSBEAggTotal: Total number of single-bit persistent ECC errors; a
	// counter.
	DCGMDevECCSBEAggTotal = "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL"
	// DCGMDevECCDBEAggTotal: Total number of double-bit persistent ECC errors; a
	// counter.
	DCGMDevECCDBEAggTotal = "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL"
	// DCGMDevCorrectableRemappedRows: Number of rows remapped for correctable
	// errors; a counter.
	DCGMDevCorrectableRemappedRows = "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"
	// DCGMDevUncorrectableRemappedRows: Number of rows remapped for
	// uncorrectable errors; a counter.
	DCGMDevUncorrectableRemappedRows = "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"
	// DCGMDevRowRemapPending: Whether a row remapping is pending (1) or not (0);
	// a gauge.
	DCGMDevRowRemapPending = "DCGM_FI_DEV_ROW_REMAP_PENDING"
	// DCGMDevRowRemapFailure: Whether a row remapping has failed (1) or not (0);
	// a gauge.
	DCGMDevRowRemapFailure = "DCGM_FI_DEV_ROW_REMAP_FAILURE"
	// DCGMProfGrEngineActive: Ratio of time the graphics engine is active (0 to
	// 1); a gauge.
	DCGMProfGrEngineActive = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
	// DCGMProfSMActive: Ratio of cycles an SM has at least one warp assigned (0
	// to 1); a gauge.
	DCGMProfSMActive = "DCGM_FI_PROF_SM_ACTIVE"
	// DCGMProfPipeTensorActive: Ratio of cycles the tensor pipe is active (0 to
	// 1); a gauge.
	DCGMProfPipeTensorActive = "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"
	// DCGMProfDRAMActive: Ratio of cycles the device memory interface is active
	// sending or receiving data (0 to 1); a gauge.
	DCGMProfDRAMActive = "DCGM_FI_PROF_DRAM_ACTIVE"
	// DCGMDevENCUtil: Encoder utilization (in %); a gauge.
	DCGMDevENCUtil = "DCGM_FI_DEV_ENC_UTIL"
	// DCGMDevDECUtil: Decoder utilization (in %); a gauge.
	DCGMDevDECUtil = "DCGM_FI_DEV_DEC_UTIL"
	// DCGMDevFBReserved: Frame buffer memory reserved (in MiB); a gauge.
	DCGMDevFBReserved = "DCGM_FI_DEV_FB_RESERVED"
	// DCGMProfPCIeTXBytes: Rate of data transmitted over the PCIe bus (in bytes
	// per second); a gauge.
	DCGMProfPCIeTXBytes = "DCGM_FI_PROF_PCIE_TX_BYTES"
	// DCGMProfPCIeRXBytes: Rate of data received over the PCIe bus (in bytes per
	// second); a gauge.
	DCGMProfPCIeRXBytes = "DCGM_FI_PROF_PCIE_RX_BYTES"
	// DCGMDevNVLinkBandwidthTotal: Total of NVLink bandwidth counter 0 over all
	// links; a counter.
	DCGMDevNVLinkBandwidthTotal = "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"
	// DCGMDriverVersion: Driver version: served as a label on every device
	// series, not as a series.
	DCGMDriverVersion = "DCGM_FI_DRIVER_VERSION"
)

// gpuplane's per-device series of the node agent's exporter, with the
// DCGM fields' labels.
const (
	// DeviceHealth is whether the device is healthy (1) or not (0); a
	// gauge.
	DeviceHealth = "gpuplane_device_health"
	// DevicePods is the number of pods the device is allocated to (above 1
	// when time-slicing shares it); a gauge.
	DevicePods = "gpuplane_device_pods"
	// DeviceAllocation is 1 for each container the device is allocated
	// to; a gauge.
	DeviceAllocation = "gpuplane_device_allocation"
	// DeviceAllocationShare is the fraction of the device (GPU or MIG
	// device) the container holds, 0 to 1: 1 whole, k/replicas for k
	// time-slicing replicas, milli/1000 for gpuplane.io/gpu-milli; a gauge.
	DeviceAllocationShare = "gpuplane_device_allocation_share"
)

// The node agent exporter's own series.
const (
	// BackendErrorsTotal counts failed calls to the device backend, by
	// LabelOperation; a counter.
	BackendErrorsTotal = "gpuplane_backend_errors_total"
	// ScrapeDurationSeconds is the time to serve a /metrics request, in
	// seconds; a histogram.
	ScrapeDurationSeconds = "gpuplane_scrape_duration_seconds"
	// PodResourcesErrorsTotal counts failed refreshes of the pod-to-device
	// mapping from the kubelet's pod-resources socket; a counter.
	PodResourcesErrorsTotal = "gpuplane_pod_resources_errors_total"
	// PodResourcesUp is whether the last refresh of the pod-to-device
	// mapping succeeded (1) or not (0); a gauge.
	PodResourcesUp = "gpuplane_pod_resources_up"
)

// The DRA kubelet plugin's series (internal/node/drametrics), under the
// names, labels and buckets of NVIDIA's DRA driver (k8s-dra-driver-gpu,
// pkg/metrics/dra_requests.go), each with LabelDriver (gpu.nvidia.com).
const (
	// DRARequestsTotal counts prepare and unprepare requests that
	// succeeded, one per claim, by LabelDriver and LabelOperation
	// (prepare, unprepare); a counter.
	DRARequestsTotal = "nvidia_dra_requests_total"
	// DRARequestDurationSeconds is the time to prepare or unprepare one
	// claim that succeeded, in seconds, by LabelDriver and
	// LabelOperation; a histogram.
	DRARequestDurationSeconds = "nvidia_dra_request_duration_seconds"
	// DRARequestsInFlight is the number of claims being prepared or
	// unprepared, by LabelDriver and LabelOperation; a gauge.
	DRARequestsInFlight = "nvidia_dra_requests_inflight"
	// DRAPreparedDevices is the number of devices of prepared claims, by
	// LabelNode, LabelDriver and LabelDeviceType (gpu, mig, vfio,
	// unknown); a gauge.
	DRAPreparedDevices = "nvidia_dra_prepared_devices"
	// DRANodePrepareErrorsTotal counts claims whose prepare failed, by
	// LabelDriver and LabelErrorType; a counter.
	DRANodePrepareErrorsTotal = "nvidia_dra_node_prepare_errors_total"
	// DRANodeUnprepareErrorsTotal counts claims whose unprepare failed, by
	// LabelDriver and LabelErrorType; a counter.
	DRANodeUnprepareErrorsTotal = "nvidia_dra_node_unprepare_errors_total"

	// LabelDriver is the DRA driver's name.
	LabelDriver = "driver"
	// LabelDeviceType is a prepared device's type: gpu, mig, vfio, unknown.
	LabelDeviceType = "device_type"
	// LabelErrorType is the step that failed: NVIDIA's prepare_devices,
	// unprepare_devices (gpuplane's only ones), lock_acquire,
	// publish_resources.
	LabelErrorType = "error_type"
)

// The series of `gpuplane cost --serve` (internal/cost/export), computed
// over a trailing window; the Grafana dashboard queries them.
const (
	// CostTeamUSDPerSecond is a team's cost rate over the window, in USD
	// per second, by LabelTeam; a gauge.
	CostTeamUSDPerSecond = "gpuplane_cost_team_usd_per_second"
	// CostNamespaceUSDPerSecond is a namespace's cost rate, in USD per
	// second, by LabelNamespace; a gauge.
	CostNamespaceUSDPerSecond = "gpuplane_cost_namespace_usd_per_second"
	// CostIdleUSDPerSecond is the cost rate of capacity no pod held, in USD
	// per second, by LabelNode and LabelModel; a gauge.
	CostIdleUSDPerSecond = "gpuplane_cost_idle_usd_per_second"
	// CostTeamAllocatedGPUs is the mean GPUs a team held over the window
	// (GPU-hours allocated / window hours; shares as fractions of a GPU),
	// by LabelTeam; a gauge.
	CostTeamAllocatedGPUs = "gpuplane_cost_team_allocated_gpus"
	// CostTeamUsedGPUs is the mean GPUs a team used (allocated times the
	// GPU's utilisation), by LabelTeam; a gauge.
	CostTeamUsedGPUs = "gpuplane_cost_team_used_gpus"
	// CostNamespaceAllocatedGPUs is the mean GPUs a namespace held, by
	// LabelNamespace; a gauge.
	CostNamespaceAllocatedGPUs = "gpuplane_cost_namespace_allocated_gpus"
	// CostNamespaceUsedGPUs is the mean GPUs a namespace used, by
	// LabelNamespace; a gauge.
	CostNamespaceUsedGPUs = "gpuplane_cost_namespace_used_gpus"
	// CostIdleGPUs is the mean GPUs no pod held, by LabelNode and
	// LabelModel; a gauge.
	CostIdleGPUs = "gpuplane_cost_idle_gpus"
	// CostWindowSeconds is the trailing window's length, in seconds; a
	// gauge.
	CostWindowSeconds = "gpuplane_cost_window_seconds"
	// CostLastRefreshTimestampSeconds is the end of the window of the last
	// successful refresh, in Unix seconds; a gauge.
	CostLastRefreshTimestampSeconds = "gpuplane_cost_last_refresh_timestamp_seconds"
	// CostRefreshErrorsTotal counts failed refreshes; a counter.
	CostRefreshErrorsTotal = "gpuplane_cost_refresh_errors_total"
)

// The series of the GPU admission webhook (internal/webhook), on its
// metrics port; the names follow controller-runtime's webhook metrics
// (controller_runtime_webhook_requests_total, _latency_seconds,
// _requests_in_flight) under the prefix gpuplane_webhook_.
const (
	// WebhookRequestsTotal counts admission requests by LabelWebhook,
	// LabelOperation (unknown when the body is unreadable), LabelCode and
	// LabelResult; a counter.
	WebhookRequestsTotal = "gpuplane_webhook_requests_total"
	// WebhookRejectionsTotal counts refusals by LabelWebhook,
	// LabelOperation and LabelRule, once per rule a request breaks; a
	// counter.
	WebhookRejectionsTotal = "gpuplane_webhook_rejections_total"
	// WebhookErrorsTotal counts failed requests by LabelWebhook and
	// LabelReason (the WebhookErr* values); a counter.
	WebhookErrorsTotal = "gpuplane_webhook_errors_total"
	// WebhookLatencySeconds is the time from the end of a request's
	// headers to its answer, the body's reading included, in seconds, by
	// LabelWebhook; a histogram.
	WebhookLatencySeconds = "gpuplane_webhook_latency_seconds"
	// WebhookRequestsInFlight is the number of requests being read or
	// answered, by LabelWebhook; a gauge.
	WebhookRequestsInFlight = "gpuplane_webhook_requests_in_flight"
	// WebhookOpenConnections is the number of connections open to the
	// admission port; a gauge.
	WebhookOpenConnections = "gpuplane_webhook_open_connections"
)

// Label names of the webhook's series.
const (
	// LabelWebhook is the webhook: mutate or validate.
	LabelWebhook = "webhook"
	// LabelResult is a request's result: allowed, denied, patched,
	// bad_request or error.
	LabelResult = "result"
	// LabelCode is the HTTP status code of the answer.
	LabelCode = "code"
	// LabelRule is the policy's rule a refused request breaks
	// (internal/webhook/policy's Rule* names), or WebhookRuleError.
	LabelRule = "rule"
	// LabelReason is why a request failed: a WebhookErr* value.
	LabelReason = "reason"
)

// Values of the webhook's LabelReason and LabelRule.
const (
	// WebhookErrBadRequest: not an admission.k8s.io/v1 AdmissionReview;
	// answered 400.
	WebhookErrBadRequest = "bad_request"
	// WebhookErrTooLarge: the body is over the limit; answered 413.
	WebhookErrTooLarge = "too_large"
	// WebhookErrReadBody: the body could not be read (the client stalled
	// past the read timeout or went away); answered 400.
	WebhookErrReadBody = "read_body"
	// WebhookErrWriteResponse: the answer could not be written.
	WebhookErrWriteResponse = "write_response"
	// WebhookErrDecodeObject: the object does not decode; refused.
	WebhookErrDecodeObject = "decode_object"
	// WebhookErrNamespaceLookup: the namespace's labels could not be read;
	// refused.
	WebhookErrNamespaceLookup = "namespace_lookup"
	// WebhookRuleError is the LabelRule of a request refused because of
	// an error (WebhookErrDecodeObject, WebhookErrNamespaceLookup), not a
	// rule of the policy.
	WebhookRuleError = "error"
)

// Label names of the node agent's exporter, as dcgm-exporter names them
// (with gpuplane's LabelVGPU).
const (
	// LabelGPU is the GPU's index on the node (NVML index order).
	LabelGPU = "gpu"
	// LabelUUID is the GPU's UUID (for a MIG device, its GPU's).
	LabelUUID = "UUID"
	// LabelPCIBusID is the GPU's PCI bus ID.
	LabelPCIBusID = "pci_bus_id"
	// LabelDevice is the device name, "nvidia<index>".
	LabelDevice = "device"
	// LabelModelName is the GPU's product name, e.g. "NVIDIA H100 80GB HBM3".
	LabelModelName = "modelName"
	// LabelHostname is the node's name.
	LabelHostname = "Hostname"
	// LabelGPUInstanceProfile is a MIG device's profile, e.g. "1g.10gb".
	LabelGPUInstanceProfile = "GPU_I_PROFILE"
	// LabelGPUInstanceID is a MIG device's GPU instance ID.
	LabelGPUInstanceID = "GPU_I_ID"
	// LabelPod is the pod a device is allocated to.
	LabelPod = "pod"
	// LabelNamespace is the pod's namespace; also the namespace of the
	// cost series.
	LabelNamespace = "namespace"
	// LabelContainer is the container a device is allocated to.
	LabelContainer = "container"
	// LabelVGPU is a time-slicing replica's index (the "3" of a device ID
	// "<uuid>::3"), under the node agent's --kubernetes-virtual-gpus.
	LabelVGPU = "vgpu"
	// LabelErrCode is DCGMDevXIDErrors's XID.
	LabelErrCode = "err_code"
	// LabelErrMsg is DCGMDevXIDErrors's XID description.
	LabelErrMsg = "err_msg"
	// LabelOperation is BackendErrorsTotal's backend call (discover,
	// sample or watch_health), and the webhook's admission operation
	// (CREATE, UPDATE, DELETE, CONNECT).
	LabelOperation = "operation"
)

// Label names of the cost series (with LabelNamespace).
const (
	// LabelTeam is the team.
	LabelTeam = "team"
	// LabelNode is the node.
	LabelNode = "node"
	// LabelModel is the GPU model.
	LabelModel = "model"
)

// The series gpuplane-scheduler's plugins add to kube-scheduler's own
// /metrics (its legacy registry).
const (
	// SchedulerGPUAnnotationConflicts counts changes of a bound pod's
	// gpuplane.io/gpus annotation that disagree with the GPUs the scheduler
	// bound it to (both are then held); a counter.
	SchedulerGPUAnnotationConflicts = "gpuplane_scheduler_gpu_annotation_conflicts_total"
)
