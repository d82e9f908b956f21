// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// header2025 is the header of disaggregated_DLRM_trace.csv
// (github.com/alibaba/clusterdata, cluster-trace-gpu-v2025).
const header2025 = "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,creation_time,scheduled_time,deletion_time\n"

func TestReadAlibaba2025ByHand(t *testing.T) {
	// Lines 2, 7282 and 7283 of the published file, and a made-up share.
	in := header2025 +
		"instance_0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n" +
		"instance_7280,CN,app_22,64,64,0,0,1,1,320.0,320.0,544.0,640.0,-1,475.00000000000006,623.0,\n" +
		"instance_7281,CN,app_88,64,64,0,0,1,1,320.0,320.0,255.0,300.0,-1,610.0,683.0,91730.0\n" +
		"half,HN,app_x,2.5,4,0.5,1,0,0,0.5,1,0,0,-1,NaN,NaN,NaN\n"
	pods, err := ReadPodsAny("t.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	want := []PodSpec{
		// 12 vCPU = 12,000 m; 120 GiB = 120 × 1024 = 122,880 MiB; 1 GPU;
		// no creation time: present from 0; no deletion: NaN.
		{Name: "instance_0", CPUMilli: 12000, MemoryMiB: 122880, NumGPU: 1, GPUMilli: 1000, Creation: 0, Deletion: nan, Scheduled: nan, Line: 2},
		// 64 vCPU = 64,000 m; 320 GiB = 327,680 MiB; no GPU.
		{Name: "instance_7280", CPUMilli: 64000, MemoryMiB: 327680, Creation: 475.00000000000006, Deletion: nan, Scheduled: nan, Line: 3},
		{Name: "instance_7281", CPUMilli: 64000, MemoryMiB: 327680, Creation: 610, Deletion: 91730, Scheduled: nan, Line: 4},
		// 2.5 vCPU = 2,500 m; 0.5 GiB = 512 MiB; half a GPU = 500 milli-GPU.
		{Name: "half", CPUMilli: 2500, MemoryMiB: 512, NumGPU: 1, GPUMilli: 500, Creation: 0, Deletion: nan, Scheduled: nan, Line: 5},
	}
	if len(pods) != len(want) {
		t.Fatalf("%d pods, want %d", len(pods), len(want))
	}
	for i, w := range want {
		if !samePod(pods[i], w) {
			t.Errorf("pod %d = %+v, want %+v", i, pods[i], w)
		}
	}
}

func samePod(a, b PodSpec) bool {
	eq := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return a.Name == b.Name && a.CPUMilli == b.CPUMilli && a.MemoryMiB == b.MemoryMiB && a.NumGPU == b.NumGPU &&
		a.GPUMilli == b.GPUMilli && a.GPUSpec == b.GPUSpec && a.Line == b.Line &&
		eq(a.Creation, b.Creation) && eq(a.Deletion, b.Deletion) && eq(a.Scheduled, b.Scheduled)
}

func TestReadAlibaba2025Errors(t *testing.T) {
	row := func(s string) string { return header2025 + s + "\n" }
	cases := []struct{ name, in, want string }{
		{"empty", "", "a.csv:1: empty file"},
		{"missing column", "instance_sn,gpu_request\n", "a.csv:1: column cpu_request: missing column"},
		{"header only", header2025, "a.csv:1: no pods"},
		{"bad cpu", row("i,HN,a,x,1,1,1,0,0,1,1,0,0,1,,,"), `a.csv:2: column cpu_request: "x" is not a number`},
		{"negative memory", row("i,HN,a,1,1,1,1,0,0,-1,1,0,0,1,,,"), "a.csv:2: column memory_request: negative value -1"},
		{"GPUs above 64", row("i,HN,a,1,1,65,1,0,0,1,1,0,0,1,,,"), "a.csv:2: column gpu_request: value 65 above 64"},
		{"fractional many GPUs", row("i,HN,a,1,1,1.5,1,0,0,1,1,0,0,1,,,"), "a.csv:2: column gpu_request: 1.5 GPUs: more than one GPU must be whole"},
		{"tiny share", row("i,HN,a,1,1,0.0001,1,0,0,1,1,0,0,1,,,"), "a.csv:2: column gpu_request: share 0.0001 of a GPU is below 1 milli-GPU"},
		{"bad time", row("i,HN,a,1,1,1,1,0,0,1,1,0,0,1,abc,,"), `a.csv:2: column creation_time: "abc" is not a time in seconds`},
		{"deletion before creation", row("i,HN,a,1,1,1,1,0,0,1,1,0,0,1,10,,5"), "a.csv:2: column deletion_time: deletion 5 before creation 10"},
		{"duplicate", header2025 + "i,HN,a,1,1,1,1,0,0,1,1,0,0,1,,,\ni,HN,a,1,1,1,1,0,0,1,1,0,0,1,,,\n", `a.csv:3: column instance_sn: instance "i" already defined on line 2`},
		{"short row", row("i,HN,a"), "a.csv:2: wrong number of fields"},
		{"empty name", row(",HN,a,1,1,1,1,0,0,1,1,0,0,1,,,"), "a.csv:2: column instance_sn: empty instance name"},
	}
	for _, tc := range cases {
		_, err := ReadAlibaba2025("a.csv", strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestReadPodsAnyDispatchesOpenb(t *testing.T) {
	in := podHeader + "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
	a, err := ReadPodsAny("p.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadPods("p.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != 1 || !samePod(a[0], b[0]) {
		t.Fatalf("ReadPodsAny %+v, ReadPods %+v", a, b)
	}
}

// TestReadAlibaba2025Trace reads the published file; the counts were made
// with awk on it (rows; HN rows, each of gpu_request 1; rows with an empty
// creation_time).
func TestReadAlibaba2025Trace(t *testing.T) {
	pods, err := ReadPodsAnyFile(filepath.Join(testenv.TracesDir(t), "alibaba-gpu-v2025", "disaggregated_DLRM_trace.csv"))
	if err != nil {
		t.Fatal(err)
	}
	gpuPods, atZero := 0, 0
	for _, p := range pods {
		if p.NumGPU > 0 {
			gpuPods++
			if p.NumGPU != 1 || p.GPUMilli != 1000 {
				t.Fatalf("pod %+v: the file has only whole single GPUs", p)
			}
		}
		if p.Creation == 0 {
			atZero++
		}
	}
	if len(pods) != 23871 || gpuPods != 7386 || atZero != 7280 {
		t.Fatalf("%d pods, %d with a GPU, %d from time 0; want 23,871, 7,386, 7,280", len(pods), gpuPods, atZero)
	}
}

// FuzzReadAlibaba2025 checks that no input makes the reader panic and that
// what it accepts is valid.
func FuzzReadAlibaba2025(f *testing.F) {
	f.Add([]byte(header2025 + "instance_0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n"))
	f.Add([]byte(header2025 + "half,HN,app_x,2.5,4,0.5,1,0,0,0.5,1,0,0,-1,NaN,NaN,NaN\n"))
	f.Add([]byte(header2025 + "i,CN,a,64,64,0,0,1,1,320.0,320.0,255.0,300.0,-1,610.0,683.0,91730.0\r\n"))
	f.Add([]byte("instance_sn,gpu_request\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := ReadPodsAny("fuzz.csv", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv:") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for _, p := range pods {
			if p.CPUMilli < 0 || p.MemoryMiB < 0 || p.NumGPU < 0 || p.NumGPU > 64 || p.GPUMilli < 0 || p.GPUMilli > 1000 ||
				(p.NumGPU > 1 && p.GPUMilli != 1000) || (p.NumGPU == 0) != (p.GPUMilli == 0) || p.Name == "" ||
				p.Deletion < p.Creation {
				t.Fatalf("accepted an invalid pod %+v", p)
			}
		}
	})
}

func TestReadAlibaba2025LongLine(t *testing.T) {
	in := header2025 + "i,HN,a," + strings.Repeat("7", 2<<20) + ",1,1,1,0,0,1,1,0,0,1,,,\n"
	_, err := ReadAlibaba2025("a.csv", strings.NewReader(in))
	if want := "a.csv:2: line longer than 1048576 bytes"; err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}

func TestReadPodsAnyFile(t *testing.T) {
	dir := t.TempDir()
	for name, in := range map[string]string{
		"openb.csv": podHeader + "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n",
		"a2025.csv": header2025 + "p0,HN,app_0,12,12,1,1,25,25,16.0,16.0,640.0,800.0,8,0,,12537496\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
		pods, err := ReadPodsAnyFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Both: 12,000 m, 16 GiB = 16,384 MiB, 1 whole GPU, 0 to 12,537,496 s.
		if len(pods) != 1 || pods[0].CPUMilli != 12000 || pods[0].MemoryMiB != 16384 || pods[0].NumGPU != 1 || pods[0].GPUMilli != 1000 || pods[0].Deletion != 12537496 {
			t.Errorf("%s: %+v", name, pods)
		}
	}
}
