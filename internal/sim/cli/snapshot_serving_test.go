// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim/engine"
)

// servingSnapshot is a cluster of two kinds of GPU node, as kube-scheduler
// sees them: t4 (1 T4) whose device plugin advertises nvidia.com/gpu, and
// h100 (8 H100s), a DRA-only node: no nvidia.com/gpu in its allocatable,
// its GPUs in a ResourceSlice of gpu.nvidia.com, none in MIG mode. EXT is
// the DeviceClass gpu.nvidia.com's extendedResourceName (KEP-5004), or
// nothing. Pending pods:
//   - claim: a claim of 1 whole GPU (class gpu.nvidia.com);
//   - share: a claim of 500 milliGPU;
//   - migclaim: a claim of a 1g.10gb (class mig.nvidia.com);
//   - gpu1, gpu2: nvidia.com/gpu 1 and 2 (the extended resource);
//   - mig3g: nvidia.com/mig-3g.40gb 1 (a device plugin's MIG device).
const servingSnapshot = `{"kind":"List","items":[
{"kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]EXT}},
{"kind":"DeviceClass","metadata":{"name":"mig.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]}},
{"kind":"Node","metadata":{"name":"t4","labels":{"nvidia.com/gpu.product":"Tesla-T4"}},"status":{"allocatable":{"cpu":"64","memory":"256Gi","nvidia.com/gpu":"1"}}},
{"kind":"Node","metadata":{"name":"h100"},"status":{"allocatable":{"cpu":"64","memory":"256Gi"}}},
{"kind":"ResourceSlice","metadata":{"name":"h100-0"},"spec":{"driver":"gpu.nvidia.com","nodeName":"h100","pool":{"name":"h100"},"devices":[DEVICES]}},
{"kind":"Pod","metadata":{"name":"claim","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"g","resourceClaimName":"claim"}]},"status":{"phase":"Pending"}},
{"kind":"ResourceClaim","metadata":{"name":"claim","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}},
{"kind":"Pod","metadata":{"name":"share","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"g","resourceClaimName":"share"}]},"status":{"phase":"Pending"}},
{"kind":"ResourceClaim","metadata":{"name":"share","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"g","exactly":{"deviceClassName":"gpu.nvidia.com","capacity":{"requests":{"milliGPU":"500"}}}}]}}},
{"kind":"Pod","metadata":{"name":"migclaim","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}],"resourceClaims":[{"name":"m","resourceClaimName":"migclaim"}]},"status":{"phase":"Pending"}},
{"kind":"ResourceClaim","metadata":{"name":"migclaim","namespace":"ml"},"spec":{"devices":{"requests":[{"name":"m","exactly":{"deviceClassName":"mig.nvidia.com","selectors":[{"cel":{"expression":"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}}]}}},
{"kind":"Pod","metadata":{"name":"gpu1","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"},"limits":{"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"gpu2","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"},"limits":{"nvidia.com/gpu":"2"}}}]},"status":{"phase":"Pending"}},
{"kind":"Pod","metadata":{"name":"mig3g","namespace":"ml"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"},"limits":{"nvidia.com/mig-3g.40gb":"1"}}}]},"status":{"phase":"Pending"}}
]}`

// servingDevices returns the h100 slice's 8 whole GPUs.
func servingDevices() string {
	var d []string
	for g := 0; g < 8; g++ {
		d = append(d, fmt.Sprintf(`{"name":"gpu-%d","attributes":{"type":{"string":"gpu"},"uuid":{"string":"GPU-%d"},"productName":{"string":"NVIDIA H100 80GB HBM3"}}}`, g, g))
	}
	return strings.Join(d, ",")
}

// TestSnapshotServing: what fits where on servingSnapshot, worked out by
// hand, under the default flags, --gpu-api dra, and --sharing mig,
// fractional and exclusive (the fit rule is the placement core's, the
// same under every flag):
//   - claim and share go only to h100 (t4 publishes no ResourceSlice) and
//     place there in every mode;
//   - migclaim fits no node (no GPU of h100 is in MIG mode: its slice
//     publishes no mig device) and mig3g none (t4 has no MIG, h100 no
//     device plugin): both fail no_resource (class resource kind), and a
//     warning names each;
//   - without EXT, gpu1 takes t4 (h100 advertises no nvidia.com/gpu) and
//     gpu2 fits no node (t4 has 1 GPU: too_large); with EXT
//     ("extendedResourceName":"nvidia.com/gpu") h100 serves nvidia.com/gpu
//     too: gpu1 places (t4 or h100) and gpu2 takes 2 of h100's GPUs.
//     Without EXT a warning says the 2 pods asking for nvidia.com/gpu fit
//     no DRA-only node.
func TestSnapshotServing(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"", `,"extendedResourceName":"nvidia.com/gpu"`} {
		body := strings.ReplaceAll(strings.ReplaceAll(servingSnapshot, "EXT", ext), "DEVICES", servingDevices())
		file := filepath.Join(dir, fmt.Sprintf("snap-%d.json", len(ext)))
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, flags := range [][2]string{{"device-plugin", ""}, {"dra", ""}, {"device-plugin", "mig"}, {"dra", "mig"}, {"device-plugin", "fractional"}, {"dra", "exclusive"}} {
			name := fmt.Sprintf("ext %v, --gpu-api %s --sharing %q", ext != "", flags[0], flags[1])
			o := DefaultOptions()
			o.SnapshotFile, o.Policies, o.Seeds, o.GPUAPI, o.Sharing, o.Format = file, "bestfit", 1, flags[0], flags[1], "json"
			var stdout, stderr strings.Builder
			if err := Run(context.Background(), o, &stdout, &stderr); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, stderr.String())
			}
			checkServing(t, name, ext != "", stdout.String(), stderr.String())
		}
	}
}

// checkServing checks one run of TestSnapshotServing: its JSON report
// (out) and its stderr.
func checkServing(t *testing.T, name string, ext bool, out, stderr string) {
	t.Helper()
	var rep engine.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := map[string]string{}
	for _, p := range rep.SnapshotPods {
		if p.Placed > 0 {
			got[p.Pod] = p.Node
		} else {
			got[p.Pod] = "failed " + p.Reason
		}
	}
	want := map[string]string{"ml/claim": "h100", "ml/share": "h100", "ml/migclaim": "failed no_resource", "ml/mig3g": "failed no_resource",
		"ml/gpu1": "t4", "ml/gpu2": "failed too_large"}
	if ext {
		want["ml/gpu2"] = "h100"
		if got["ml/gpu1"] == "h100" {
			want["ml/gpu1"] = "h100"
		}
	}
	for pod, w := range want {
		if got[pod] != w {
			t.Errorf("%s: %s %q, want %q", name, pod, got[pod], w)
		}
	}
	// Without EXT: h100 is DRA only, and gpu1 and gpu2 ask for
	// nvidia.com/gpu.
	unmapped := "snap-0.json: 1 nodes serve their GPUs by DRA only and no DeviceClass of the List maps nvidia.com/gpu (spec.extendedResourceName): the 2 pods asking for nvidia.com/gpu fit none of them"
	if got := strings.Contains(stderr, unmapped); got == ext {
		t.Errorf("%s: warning %q on stderr: %v, want %v:\n%s", name, unmapped, got, !ext, stderr)
	}
	for _, pod := range []string{"ml/migclaim", "ml/mig3g"} {
		if !strings.Contains(stderr, `pod "`+pod+`"`) || !strings.Contains(stderr, "no_resource") {
			t.Errorf("%s: stderr names no %s failing no_resource:\n%s", name, pod, stderr)
		}
	}
}
