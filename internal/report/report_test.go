package report

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/sim"
)

func sample() *sim.Report {
	return &sim.Report{Source: "a + b", Mode: "fill", Nodes: 2, GPUs: 4, Pods: 3, Inflate: 1.3,
		Results: []sim.Result{
			{Policy: "fgd", Seed: 1, GPUAllocationRatio: 0.95, Curve: []sim.Point{{ArrivedRatio: 0.1, AllocationRatio: 0.1, FragmentationRatio: 0.2}, {ArrivedRatio: 1.3, AllocationRatio: 0.95, FragmentationRatio: 0.9}}},
			{Policy: "fgd", Seed: 2, GPUAllocationRatio: 0.93},
			{Policy: "bestfit", Seed: 1, GPUAllocationRatio: 0.9, Curve: []sim.Point{{ArrivedRatio: 0.1, AllocationRatio: 0.1, FragmentationRatio: 0.3}, {ArrivedRatio: 1.3, AllocationRatio: 0.9, FragmentationRatio: 0.95}}},
		},
		Summary: []sim.Summary{{Policy: "fgd", Runs: 2, GPUAllocationRatioMean: 0.94, GPUAllocationRatioStd: 0.01}, {Policy: "bestfit", Runs: 1, GPUAllocationRatioMean: 0.9}},
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sample()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fgd", "94.00", "1.00", "bestfit", "90.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var back sim.Report
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Results) != 3 || back.Summary[0].GPUAllocationRatioMean != 0.94 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

// TestHTMLSelfContained checks that the page loads nothing: no scripts, no
// external URLs, and one inline SVG per chart.
func TestHTMLSelfContained(t *testing.T) {
	page := string(HTML(sample()))
	if n := strings.Count(page, "<svg"); n != 2 {
		t.Errorf("%d charts, want 2", n)
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "<link") || strings.Contains(page, "<img") {
		t.Error("page loads scripts, styles or images")
	}
	for _, u := range regexp.MustCompile(`https?://[^"' )]+`).FindAllString(page, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("external URL %s", u)
		}
	}
}

// TestHTMLInChromium renders the report in headless Chromium (Debian
// package chromium) with the network off and checks what it drew: the DOM
// holds both charts with their lines, and a screenshot was made.
func TestHTMLInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but chromium is not installed")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	path, err := WriteHTML(dir, sample())
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + filepath.Join(dir, "profile")}
	dom, err := exec.Command(chromium, append(args, "--dump-dom", "file://"+path)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	if n := strings.Count(string(dom), "<polyline"); n != 4 {
		t.Errorf("rendered DOM has %d chart lines, want 4", n)
	}
	shot := filepath.Join(dir, "shot.png")
	if out, err := exec.Command(chromium, append(args, "--screenshot="+shot, "--window-size=900,1400", "file://"+path)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("screenshot missing or empty: %v", err)
	}
}
