// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package quota

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
	"github.com/gpuplane/gpuplane/internal/trace"
)

// openbCapacity reads the GPUs per model of the openb GPU node list.
func openbCapacity(t *testing.T) map[string]int {
	t.Helper()
	path := testenv.Openb(t, "openb_node_list_gpu_node.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes, err := trace.ReadNodes(path, f)
	if err != nil {
		t.Fatal(err)
	}
	return Capacity(nodes)
}

// The openb GPU node list has 204 V100M32, 842 T4 and 2 A10 GPUs (30, 404
// and 2 nodes: awk -F, 'NR>1{n[$5]+=$4} END{for(m in n) print m, n[m]}').
func TestCapacityOpenb(t *testing.T) {
	c := openbCapacity(t)
	for m, want := range map[string]int{"V100M32": 204, "T4": 842, "A10": 2, "G2": 4392, "G3": 312, "V100M16": 195, "P100": 265} {
		if c[m] != want {
			t.Errorf("capacity[%s] = %d, want %d", m, c[m], want)
		}
	}
}

// testdata/teams.yaml: nominal V100M32 100+60+40 = 200 <= 204, T4 200+100 =
// 300 <= 842, A10 2 <= 2: accepted. teams-over.yaml raises nlp's V100M32
// to 150: 100+150+40 = 290, 86 more than 204.
func TestCheckCapacityOpenb(t *testing.T) {
	c := openbCapacity(t)
	ok, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckCapacity("teams.yaml", ok, c); err != nil {
		t.Errorf("teams.yaml refused: %v", err)
	}
	over, err := LoadTeams("testdata/teams-over.yaml")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Plan("teams-over.yaml", over, c)
	want := "teams-over.yaml:8: model V100M32: nominal quotas sum to 290 GPUs (vision 100, nlp 150, research 40) but the nodes have 204: over by 86 GPUs"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	// A model the nodes lack is over by its whole nominal sum.
	if err := CheckCapacity("t", ok, map[string]int{"V100M32": 204, "T4": 842}); err == nil || !strings.Contains(err.Error(), "model A10: nominal quotas sum to 2 GPUs (nlp 2) but the nodes have 0: over by 2 GPUs") {
		t.Errorf("no A10 nodes: %v", err)
	}
}

// Hard caps of testdata/teams.yaml, by hand:
//   - vision: V100M32 100 + min(50, nlp 60 + research 40) = 150; T4 200 +
//     research 100 = 300; 450 in all.
//   - nlp: V100M32 60 + 0 (borrowingLimit 0); A10 2 + 0 (nobody else has
//     A10); 62.
//   - research: V100M32 40 + (vision's lendingLimit 20 + nlp 60) = 120; T4
//     100 + min(20, 200) = 120; 240.
func TestHardCap(t *testing.T) {
	ts, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for team, want := range map[string]int{"vision": 450, "nlp": 62, "research": 240} {
		if got := HardCap(ts, team); got != want {
			t.Errorf("HardCap(%s) = %d, want %d", team, got, want)
		}
	}
}

func TestPlanYAML(t *testing.T) {
	ts, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Plan("teams.yaml", ts, map[string]int{"V100M32": 204, "T4": 842, "A10": 2})
	if err != nil {
		t.Fatal(err)
	}
	// 1 Cohort, 3 ResourceFlavors, 3 WorkloadPriorityClasses, 3
	// ClusterQueues, 4 LocalQueues and 4 ResourceQuotas (4 namespaces).
	if len(objs) != 18 {
		t.Errorf("%d objects, want 18", len(objs))
	}
	var buf bytes.Buffer
	if err := WriteYAML(&buf, objs); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata:\n  name: openb\nspec: {}\n",
		"kind: ResourceFlavor\nmetadata:\n  name: v100m32\n  labels:\n    gpuplane.io/model: V100M32\nspec:\n  nodeLabels:\n    nvidia.com/gpu.product: Tesla-V100-SXM2-32GB\n",
		"kind: WorkloadPriorityClass\nmetadata:\n  name: vision\nvalue: 100\n",
		"kind: ClusterQueue\nmetadata:\n  name: vision\nspec:\n  cohortName: openb\n  namespaceSelector:\n    matchExpressions:\n      - key: kubernetes.io/metadata.name\n        operator: In\n        values:\n          - vision\n          - vision-dev\n" +
			"  resourceGroups:\n    - coveredResources:\n        - nvidia.com/gpu\n      flavors:\n        - name: v100m32\n          resources:\n            - name: nvidia.com/gpu\n              nominalQuota: 100\n              borrowingLimit: 50\n              lendingLimit: 20\n" +
			"        - name: t4\n          resources:\n            - name: nvidia.com/gpu\n              nominalQuota: 200\n" +
			"  preemption:\n    reclaimWithinCohort: Any\n    borrowWithinCohort:\n      policy: LowerPriority\n    withinClusterQueue: LowerPriority\n",
		"kind: LocalQueue\nmetadata:\n  name: vision\n  namespace: vision-dev\nspec:\n  clusterQueue: vision\n",
		"apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: gpuplane-gpu\n  namespace: research\nspec:\n  hard:\n    requests.nvidia.com/gpu: 240\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks\n%s\n--- output:\n%s", want, out)
			break
		}
	}
}

func TestPlanNeedsProduct(t *testing.T) {
	ts, err := ParseTeams("t.yaml", []byte("cohort: c\nteams:\n- name: a\n  namespaces: [x]\n  quotas:\n  - {model: T4, nominal: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Plan("t.yaml", ts, map[string]int{"T4": 4})
	if err == nil || !strings.Contains(err.Error(), "t.yaml:6: product: model T4 has no nvidia.com/gpu.product value") {
		t.Errorf("error %v", err)
	}
}

// TestPlanForDRA: under DRA the Kueue objects are those of the
// device-plugin form byte for byte (the Configuration maps
// gpu.nvidia.com to nvidia.com/gpu, so the ClusterQueues' resource is
// the same); only each ResourceQuota gains the cap on claimed
// gpu.nvidia.com devices, at the team's hard cap (research: 240, by hand
// in TestHardCap). An unknown API is refused.
func TestPlanForDRA(t *testing.T) {
	ts, err := LoadTeams("testdata/teams.yaml")
	if err != nil {
		t.Fatal(err)
	}
	capacity := map[string]int{"V100M32": 204, "T4": 842, "A10": 2}
	yamlOf := func(api string) string {
		objs, err := PlanFor("teams.yaml", ts, capacity, api)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteYAML(&buf, objs); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	dp, dra := yamlOf(DevicePlugin), yamlOf(DRA)
	cut := func(s string) string { return s[:strings.Index(s, "kind: ResourceQuota")] }
	if cut(dp) != cut(dra) {
		t.Errorf("the Kueue objects differ between device-plugin and dra:\n%s\n---\n%s", cut(dp), cut(dra))
	}
	want := "kind: ResourceQuota\nmetadata:\n  name: gpuplane-gpu\n  namespace: research\nspec:\n  hard:\n    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: 240\n    requests.nvidia.com/gpu: 240\n"
	if !strings.Contains(dra, want) || strings.Contains(dp, "deviceclass") {
		t.Errorf("dra output lacks\n%s\nor the device-plugin one has it; dra:\n%s", want, dra[strings.Index(dra, "kind: ResourceQuota"):])
	}
	if _, err := PlanFor("teams.yaml", ts, capacity, "csi"); err == nil || err.Error() != `unknown GPU API "csi" (device-plugin or dra)` {
		t.Errorf("unknown API: %v", err)
	}
}

// TestKueueConfigFor: the device-plugin Configuration is KueueConfig's;
// the DRA one adds Kueue v0.17.0's two DRA gates and the one mapping of
// DeviceClass gpu.nvidia.com to nvidia.com/gpu, in Kueue's field names
// (apis/config/v1beta2 Configuration.featureGates,
// Resources.deviceClassMappings, DeviceClassMapping.name and
// deviceClassNames).
func TestKueueConfigFor(t *testing.T) {
	for api, want := range map[string]string{
		"": "---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nresources:\n  excludeResourcePrefixes:\n    - cpu\n    - memory\n    - ephemeral-storage\n    - hugepages-\n",
		DRA: "---\napiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates:\n  DRAExtendedResources: true\n  DynamicResourceAllocation: true\n" +
			"resources:\n  excludeResourcePrefixes:\n    - cpu\n    - memory\n    - ephemeral-storage\n    - hugepages-\n" +
			"  deviceClassMappings:\n    - name: nvidia.com/gpu\n      deviceClassNames:\n        - gpu.nvidia.com\n",
	} {
		c, err := KueueConfigFor(api)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteYAML(&buf, []any{c}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != want {
			t.Errorf("api %q:\n%s\nwant\n%s", api, buf.String(), want)
		}
	}
}

// TestKueueConfigKeys: the keys a Kueue's own configuration takes from
// the DRA form, without apiVersion and kind.
func TestKueueConfigKeys(t *testing.T) {
	c, err := KueueConfigFor(DRA)
	if err != nil {
		t.Fatal(err)
	}
	k, err := c.Keys()
	if err != nil {
		t.Fatal(err)
	}
	want := "map[featureGates:map[DRAExtendedResources:true DynamicResourceAllocation:true] " +
		"resources:map[deviceClassMappings:[map[deviceClassNames:[gpu.nvidia.com] name:nvidia.com/gpu]] excludeResourcePrefixes:[cpu memory ephemeral-storage hugepages-]]]"
	if got := fmt.Sprint(k); got != want {
		t.Errorf("keys %s\nwant %s", got, want)
	}
}
