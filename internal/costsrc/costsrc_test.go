package costsrc

import (
	"math"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/costalloc"
)

func TestFraction(t *testing.T) {
	for _, c := range []struct {
		v        float64
		num, den int64
		ok       bool
	}{
		{1, 1, 1, true},
		{0.25, 1, 4, true},
		{1.0 / 3, 1, 3, true},  // 1 of 3 replicas, as the node agent writes it
		{2.0 / 3, 2, 3, true},  // 2 of 3
		{0.3, 3, 10, true},     // 300 milli-GPU
		{0.001, 1, 1000, true}, // 1 milli-GPU
		{1.0 / 1024, 1, 1024, true},
		{5.0 / 7, 5, 7, true},
		{1.0 / 1025, 0, 0, false}, // more replicas than time-slicing allows
		{0, 0, 0, false},
		{1.5, 0, 0, false},
		{math.NaN(), 0, 0, false},
	} {
		n, d, ok := fraction(c.v)
		if n != c.num || d != c.den || ok != c.ok {
			t.Errorf("fraction(%v) = %d/%d %v, want %d/%d %v", c.v, n, d, ok, c.num, c.den, c.ok)
		}
	}
}

const gpuLabels = `Hostname="n1",UUID="GPU-1",modelName="NVIDIA L4"`

// TestGrid: samples every 30 s on a 30 s grid, and one 15 s late. The
// share series has samples at 30, 60 and 105 s: at 90 s nothing lies in
// (60, 90], so the holding breaks: [30 s, 90 s) and [120 s, 150 s) (105 s
// counts at 120 s). The window ends at 150 s.
func TestGrid(t *testing.T) {
	f, err := ParseOpenMetrics("g.om", []byte(`# TYPE gpuplane_device_health gauge
gpuplane_device_health{`+gpuLabels+`} 1 0
gpuplane_device_health{`+gpuLabels+`} 1 30
gpuplane_device_health{`+gpuLabels+`} 1 60
gpuplane_device_health{`+gpuLabels+`} 1 90
gpuplane_device_health{`+gpuLabels+`} 1 120
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 30
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 60.000
gpuplane_device_allocation_share{`+gpuLabels+`,namespace="ns",pod="p",container="c",label_training_kubeflow_org_job_name="pt"} 0.5 105
gpuplane_device_allocation_share{`+gpuLabels+`} 0.25 0
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{`+gpuLabels+`} 50 30
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{`+gpuLabels+`,namespace="ns",pod="p",container="c"} 1024 30
DCGM_FI_DEV_FB_USED{`+gpuLabels+`,namespace="ns",pod="p",container="c"} 2048 60
# TYPE other gauge
other{x="y"} 1 0
# EOF
`))
	if err != nil {
		t.Fatal(err)
	}
	if f.MinTime != 0 || f.MaxTime != 120_000 || f.Samples != 12 || f.Interval() != 30_000 {
		t.Fatalf("file: min %d max %d samples %d interval %d", f.MinTime, f.MaxTime, f.Samples, f.Interval())
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 150_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	in := r.Input
	if len(in.GPUs) != 1 || in.GPUs[0] != (costalloc.GPU{Node: "n1", UUID: "GPU-1", Model: "L4"}) {
		t.Fatalf("GPUs %+v", in.GPUs)
	}
	half := costalloc.Share{Kind: costalloc.Whole, Num: 1, Den: 2}
	want := []costalloc.Holding{
		{Namespace: "ns", Pod: "p", Job: "pt", GPU: "GPU-1", Share: half, Start: 30_000, End: 90_000},
		{Namespace: "ns", Pod: "p", Job: "pt", GPU: "GPU-1", Share: half, Start: 120_000, End: 150_000},
		{GPU: "GPU-1", Share: costalloc.Share{Kind: costalloc.Whole, Num: 1, Den: 4}, Start: 0, End: 30_000},
	}
	if len(in.Holdings) != len(want) {
		t.Fatalf("holdings %+v", in.Holdings)
	}
	for i := range want {
		if in.Holdings[i] != want[i] {
			t.Errorf("holding %d: %+v, want %+v", i, in.Holdings[i], want[i])
		}
	}
	// Utilisation: one sample, at 30 s, standing for [30 s, 60 s), in
	// percent (DCGM_FI_DEV_GPU_UTIL), scaled by 0.01.
	if g := in.UtilGrid["GPU-1"]; g.Start != 0 || g.Step != 30_000 || len(g.U) != 5 || g.U[1] != 50 || g.Scale != 0.01 || g.U[0] == g.U[0] || g.U[2] == g.U[2] || len(in.Util) != 0 {
		t.Errorf("util %+v %+v", in.UtilGrid, in.Util)
	}
	if r.Unattributed != 1 || r.Series != 5 {
		t.Errorf("unattributed %d series %d, want 1 and 5", r.Unattributed, r.Series)
	}
	// Usage: from 30 s to 60 s, memory 1024 and 2048 MiB, utilisation 0.5
	// and none.
	if len(r.Usage) != 1 {
		t.Fatalf("usage %+v", r.Usage)
	}
	u := r.Usage[0]
	if u.Pod != "p" || u.Namespace != "ns" || u.Model != "L4" || u.Start != 30_000 || u.Step != 30_000 || len(u.FBUsedMiB) != 2 ||
		u.FBUsedMiB[0] != 1024 || u.FBUsedMiB[1] != 2048 || u.Util[0] != 0.5 || !math.IsNaN(float64(u.Util[1])) {
		t.Errorf("usage %+v", u)
	}
}

func TestMappingWarnings(t *testing.T) {
	f, err := ParseOpenMetrics("w.om", []byte(`# TYPE gpuplane_device_health gauge
gpuplane_device_health{Hostname="n1",UUID="GPU-1",modelName="Acme X1"} 1 0
gpuplane_device_health{Hostname="n1",modelName="NVIDIA L4"} 1 0
# TYPE gpuplane_device_allocation_share gauge
gpuplane_device_allocation_share{Hostname="n1",UUID="GPU-1",modelName="Acme X1",namespace="a",pod="b"} 0.123456 0
# EOF
`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ReadOpenMetrics(f, Window{From: 0, To: 60_000, Step: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(r.Warnings, "\n")
	for _, want := range []string{`GPU model "Acme X1" (modelName) is not in the catalog`, "1 gpuplane_device_health series without a UUID label", "1 gpuplane_device_allocation_share values are no fraction"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
	if _, err := ReadOpenMetrics(f, Window{From: 0, To: 60_000}); err == nil || !strings.Contains(err.Error(), "step 0 ms") {
		t.Errorf("step 0: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"garbage", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1 0\ngpuplane_device_health{UUID=\"g\" 1 30\n# EOF\n", "e.om:3:"},
		{"no timestamp", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1\n# EOF\n", "e.om:2: gpuplane_device_health: sample without a timestamp"},
		{"no EOF", "# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\"} 1 0\n", "e.om:3: data does not end with # EOF"},
		{"NaN", "gpuplane_device_allocation_share{UUID=\"g\"} NaN 0\n# EOF\n", "e.om:1: gpuplane_device_allocation_share: value NaN"},
		{"twice", "gpuplane_device_health{UUID=\"g\"} 1 0\ngpuplane_device_health{UUID=\"g\"} 0 0\n# EOF\n", "two samples at 0 ms"},
		{"empty", "# EOF\n", "e.om: no samples"},
	} {
		_, err := ParseOpenMetrics("e.om", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func FuzzParseOpenMetrics(f *testing.F) {
	f.Add([]byte("# TYPE gpuplane_device_health gauge\ngpuplane_device_health{UUID=\"g\",Hostname=\"n\",modelName=\"NVIDIA L4\"} 1 0\n# EOF\n"))
	f.Add([]byte("gpuplane_device_allocation_share{UUID=\"g\",GPU_I_PROFILE=\"1g.10gb\",pod=\"p\",namespace=\"n\"} 0.5 30\n# EOF\n"))
	f.Add([]byte("DCGM_FI_DEV_GPU_UTIL{UUID=\"g\"} 50 1e9\n# EOF\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseOpenMetrics("f.om", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.om") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		_, _ = ReadOpenMetrics(file, Window{From: file.MinTime, To: file.MinTime + 10*file.Interval(), Step: file.Interval()})
	})
}
