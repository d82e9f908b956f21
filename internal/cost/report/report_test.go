// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"fmt"
	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	cost "github.com/gpuplane/gpuplane/internal/cost/prices"
	"github.com/gpuplane/gpuplane/internal/cost/rightsize"
	"github.com/gpuplane/gpuplane/internal/htmlkit"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const (
	minute = 60_000
	hour   = 3_600_000
	// t0 is 2026-11-30 00:00 UTC in Unix milliseconds.
	t0 = 1795996800 * 1000
)

func testPrices(t testing.TB, lines string) *cost.Prices {
	t.Helper()
	p := &cost.Prices{}
	if err := p.ReadPrices("test", strings.NewReader(lines)); err != nil {
		t.Fatal(err)
	}
	return p
}

// small is the window worked by hand in TestHTMLByHand: 00:30 to 03:00 UTC
// on 2026-11-30, three GPUs.
//
//	g1 A100-80GB (n1, 2.00 USD/h), utilisation 0.5: ml/train-0 (job train,
//	   team ml) holds it whole from 00:00 to 02:00, clipped to 00:30.
//	g2 T4 (n2, 0.36 USD/h), no utilisation samples: web/infer-a (team web)
//	   holds one of 4 time-slicing replicas from 01:00 to 03:00.
//	g3 A100-80GB (n1), utilisation 0.25: ml/nb (team ml) holds a 3g.40gb
//	   MIG instance (3 of 7 compute slices) for the whole window.
func small(t testing.TB) alloc.Input {
	mig, err := alloc.MIGShare("A100-80GB", "3g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	var u1, u3 []alloc.Sample
	for m := int64(0); m <= 180; m++ {
		u1 = append(u1, alloc.Sample{Time: t0 + m*minute, Util: 0.5})
		u3 = append(u3, alloc.Sample{Time: t0 + m*minute, Util: 0.25})
	}
	return alloc.Input{
		From: t0 + 30*minute, To: t0 + 3*hour,
		GPUs: []alloc.GPU{{Node: "n1", UUID: "g1", Model: "A100-80GB"}, {Node: "n2", UUID: "g2", Model: "T4"}, {Node: "n1", UUID: "g3", Model: "A100-80GB"}},
		Holdings: []alloc.Holding{
			{Namespace: "ml", Pod: "train-0", Job: "train", Team: "ml", GPU: "g1", Share: alloc.Share{Kind: alloc.Whole}, Start: t0, End: t0 + 2*hour},
			{Namespace: "web", Pod: "infer-a", Team: "web", GPU: "g2", Share: alloc.Share{Kind: alloc.Replica, Replicas: 4}, Start: t0 + hour, End: t0 + 3*hour},
			{Namespace: "ml", Pod: "nb", Team: "ml", GPU: "g3", Share: mig, Start: t0, End: t0 + 4*hour},
		},
		Util:   map[string][]alloc.Sample{"g1": u1, "g3": u3},
		Prices: testPrices(t, "A100-80GB 2.00\nT4 0.36"),
	}
}

// TestBuckets: a window of at most 2 days is cut into UTC hours, a longer
// one into UTC days; the first and last bucket may be partial.
func TestBuckets(t *testing.T) {
	if BucketLength(2*24*hour) != hour || BucketLength(2*24*hour+1) != 24*hour {
		t.Fatalf("bucket lengths %d %d", BucketLength(2*24*hour), BucketLength(2*24*hour+1))
	}
	r, err := Build(small(t))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]int64{{t0 + 30*minute, t0 + hour}, {t0 + hour, t0 + 2*hour}, {t0 + 2*hour, t0 + 3*hour}}
	if len(r.Buckets) != len(want) {
		t.Fatalf("%d buckets, want 3", len(r.Buckets))
	}
	for i, b := range r.Buckets {
		if b.Start != want[i][0] || b.End != want[i][1] {
			t.Errorf("bucket %d [%d, %d), want %v", i, b.Start, b.End, want[i])
		}
	}
	// 3 days from 12:00: day buckets [12:00, 24:00), 2 whole days, [00:00, 12:00).
	in := small(t)
	in.From, in.To = t0+12*hour, t0+84*hour
	r, err = Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Buckets) != 4 || r.Buckets[0].End != t0+24*hour || r.Buckets[3].Start != t0+72*hour || r.Buckets[3].End != t0+84*hour {
		t.Fatalf("day buckets %+v", r.Buckets)
	}
}

// TestBucketCents works the buckets of small by hand (cents exact, then
// largest remainder, docs/cost.md).
//
//	00:30-01:00 (0.5 h): ml = train 0.5 GPU-h x 200 = 100 + nb 3/7 x 0.5 x
//	  200 = 42 6/7 -> 142 6/7; idle n1 = 4/7 x 0.5 x 200 = 57 1/7, idle n2
//	  = 0.5 x 36 = 18; asset 218. Floors 217: ml gets the cent, 143.
//	01:00-02:00: ml = 200 + 85 5/7; web = 1/4 x 36 = 9; idle n1 = 114 2/7,
//	  n2 = 27; asset 436. Floors 435: ml (5/7) gets the cent, 286.
//	02:00-03:00: ml = nb 85 5/7; web 9; idle n1 = g1 200 + g3 114 2/7, n2
//	  27; asset 436. Floors 435: ml gets the cent, 86.
//
// Conservation per bucket: the rows add up to the bucket's asset cents.
// The buckets' assets add up to the window's (218 + 436 + 436 = 1090 =
// 2.5 h x (200 + 200 + 36)); ml's buckets add up to 515 c, the window's
// ml row is 514 c (514 2/7 rounded): rounding per bucket.
func TestBucketCents(t *testing.T) {
	r, err := Build(small(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ ml, web, idle, asset int64 }{{143, 0, 75, 218}, {286, 9, 141, 436}, {86, 9, 341, 436}}
	var assets int64
	for i, b := range r.Buckets {
		got := map[string]int64{}
		var sum int64
		for _, x := range b.Teams.Rows {
			got[x.Key] = x.CostCents
			sum += x.CostCents
		}
		var idle int64
		for _, x := range b.Teams.Idle {
			idle += x.CostCents
			sum += x.CostCents
		}
		w := want[i]
		if got["ml"] != w.ml || got["web"] != w.web || idle != w.idle || b.Teams.AssetCents != w.asset {
			t.Errorf("bucket %d: ml %d web %d idle %d asset %d, want %+v", i, got["ml"], got["web"], idle, b.Teams.AssetCents, w)
		}
		if sum != b.Teams.AssetCents {
			t.Errorf("bucket %d: rows add up to %d c, asset %d c", i, sum, b.Teams.AssetCents)
		}
		assets += b.Teams.AssetCents
	}
	if assets != 1090 || r.Teams.AssetCents != 1090 {
		t.Errorf("buckets' assets %d c, window's %d c; want 1090", assets, r.Teams.AssetCents)
	}
}

// cells returns the text of each cell of the table row that starts with
// first, in the table with the given id.
func cells(t *testing.T, page, id, first string) []string {
	t.Helper()
	m := regexp.MustCompile(`<table id="` + id + `">.*?</table>`).FindString(page)
	if m == "" {
		t.Fatalf("no table %s", id)
	}
	for _, row := range regexp.MustCompile(`<tr[^>]*>(.*?)</tr>`).FindAllStringSubmatch(m, -1) {
		var out []string
		for _, c := range regexp.MustCompile(`<t[dh][^>]*>(.*?)</t[dh]>`).FindAllStringSubmatch(row[1], -1) {
			out = append(out, c[1])
		}
		if len(out) > 0 && out[0] == first {
			return out
		}
	}
	t.Fatalf("table %s has no row %q: %s", id, first, m)
	return nil
}

// TestHTMLByHand checks the page's figures for small, worked by hand.
//
// Window 2.5 h; asset 2.5 x (2.00 + 0.36 + 2.00) = 10.90 USD, 7.5 GPU-h.
//
//	train: 1.5 GPU-h x 200 = 300 c; used 1.5 x 0.5 = 0.75, efficiency 50%,
//	  unused 150 c.
//	nb: 3/7 x 2.5 = 15/14 = 1.07 GPU-h, 214 2/7 c -> 214; used x 0.25 =
//	  0.27, efficiency 25%, unused 214 2/7 x 0.75 = 160.7 -> 161 c.
//	infer-a: 1/4 x 2 = 0.5 GPU-h x 36 = 18 c; no samples: used 0, unused 18.
//	idle n1 (A100): g1 1 h + g3 4/7 x 2.5 = 17/7 GPU-h, 485 5/7 c -> 486
//	  (largest remainder); idle n2 (T4): 2 GPU-h, 72 c.
//
// Teams: ml 514 2/7 -> 514 c, 2.57 GPU-h, used 1.02, efficiency
// 1.017857/2.571429 = 39.6%, unused 514 2/7 x 0.604 = 310.7 -> 311 c; web
// 18 c. Held by pods 532 c (48.8%), idle 558 c (51.2%); efficiency of all
// held GPU-hours 1.02 / 3.07 = 33.1%.
//
// Idle by model: A100-80GB 5 GPU-h, 2.43 idle (48.6%), 4.86 USD of 10.00
// (by model the A100 row is 514 2/7 -> 514 c); T4 2.5 GPU-h, 2.00 idle
// (80.0%), 0.72 of 0.90; all 7.5, 31/7 = 4.43 idle (59.0%), 5.58 of 10.90.
//
// Efficiency histogram, weighted by GPU-hours allocated (3.07 in all):
// [0, 10%) infer-a 0.50 (16.3%), [20, 30%) nb 1.07 (34.9%), [50, 60%)
// train 1.50 (48.8%).
func TestHTMLByHand(t *testing.T) {
	r, err := Build(small(t))
	if err != nil {
		t.Fatal(err)
	}
	page := string(HTML(r))
	for _, want := range []string{
		`Over 2.5 hours the GPUs cost <b>$10.90</b> (7.50 GPU-hours): $5.32 held by pods (48.8%) and $5.58 idle (51.2%). The pods used 1.02 of the 3.07 GPU-hours they held: efficiency 33.1%.`,
		`<h1>gpuplane cost: 2026-11-30 00:30 to 2026-11-30 03:00 UTC</h1>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	rows := []struct {
		id   string
		want []string
	}{
		{"teams", []string{"ml", "2.57", "1.02", "39.6%", "$5.14", "$3.11"}},
		{"teams", []string{"web", "0.50", "0.00", "0.0%", "$0.18", "$0.18"}},
		{"teams", []string{"idle", "", "", "", "$5.58", ""}},
		{"teams", []string{"all GPUs", "", "", "", "$10.90", ""}},
		{"jobs", []string{"ml/train", "A100-80GB", "1.50", "0.75", "50.0%", "$3.00", "$1.50"}},
		{"jobs", []string{"ml/nb", "A100-80GB", "1.07", "0.27", "25.0%", "$2.14", "$1.61"}},
		{"jobs", []string{"web/infer-a", "T4", "0.50", "0.00", "0.0%", "$0.18", "$0.18"}},
		{"idle", []string{"A100-80GB", "5.00", "2.43", "48.6%", "$4.86", "$10.00"}},
		{"idle", []string{"T4", "2.50", "2.00", "80.0%", "$0.72", "$0.90"}},
		{"idle", []string{"all models", "7.50", "4.43", "59.0%", "$5.58", "$10.90"}},
		{"buckets", []string{"unit", "ml", "web", "idle", "total"}},
		{"buckets", []string{"2026-11-30 00:30", "1.43", "0.00", "0.75", "2.18"}},
		{"buckets", []string{"2026-11-30 01:00", "2.86", "0.09", "1.41", "4.36"}},
		{"buckets", []string{"2026-11-30 02:00", "0.86", "0.09", "3.41", "4.36"}},
		{"efficiency", []string{"[0%, 10%)", "0.50", "16.3%"}},
		{"efficiency", []string{"[10%, 20%)", "0.00", "0.0%"}},
		{"efficiency", []string{"[20%, 30%)", "1.07", "34.9%"}},
		{"efficiency", []string{"[50%, 60%)", "1.50", "48.8%"}},
		{"efficiency", []string{"[90%, 100%]", "0.00", "0.0%"}},
	}
	for _, x := range rows {
		first := x.want[0]
		if first == "unit" {
			first = "hour from"
			x.want[0] = first
		}
		if got := cells(t, page, x.id, first); strings.Join(got, "|") != strings.Join(x.want, "|") {
			t.Errorf("%s row %s: %q, want %q", x.id, first, got, x.want)
		}
	}
	// Jobs by cost: train, nb, infer-a.
	jobs := regexp.MustCompile(`<table id="jobs">.*?</table>`).FindString(page)
	if i, j, k := strings.Index(jobs, "ml/train"), strings.Index(jobs, "ml/nb"), strings.Index(jobs, "web/infer-a"); !(i < j && j < k) {
		t.Errorf("jobs not by cost: %s", jobs)
	}
	// The chart over time: one band per team and idle, legend ml, web, idle.
	svg := regexp.MustCompile(`(?s)<h2>Cost by team over time</h2>(<svg.*?</svg>)`).FindStringSubmatch(page)
	if svg == nil {
		t.Fatal("no chart over time")
	}
	if n := strings.Count(svg[1], `class="band"`); n != 3 {
		t.Errorf("%d bands over time, want 3", n)
	}
	for _, name := range []string{">ml<", ">web<", ">idle<", ">Nov 30 01:00<"} {
		if !strings.Contains(svg[1], name) {
			t.Errorf("chart over time lacks %s", name)
		}
	}
	if n := strings.Count(page, `fill-opacity="0.85"`); n != 3+Bins {
		t.Errorf("%d filled bands, want 3 over time and %d bins", n, Bins)
	}
	// Self-contained: no script, no link, no address but SVG's namespace.
	bare := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
	for _, s := range []string{"<script", "src=", "href=", "http:", "https:"} {
		if strings.Contains(bare, s) {
			t.Errorf("page holds %s", s)
		}
	}
}

// TestTeamsBeyondSeven: teams past the 7 of highest cost are drawn
// together, and a window where no pod held a GPU renders without a
// histogram.
func TestTeamsBeyondSeven(t *testing.T) {
	in := alloc.Input{From: t0, To: t0 + hour, Prices: testPrices(t, "T4 0.36")}
	for i := range 9 {
		uuid := fmt.Sprintf("g%d", i)
		in.GPUs = append(in.GPUs, alloc.GPU{Node: "n", UUID: uuid, Model: "T4"})
		in.Holdings = append(in.Holdings, alloc.Holding{Namespace: "ns", Pod: uuid, Team: fmt.Sprintf("team%d", i),
			GPU: uuid, Share: alloc.Share{Kind: alloc.Milli, Milli: int64(100 * (i + 1))}, Start: t0, End: t0 + hour})
	}
	r, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	page := string(HTML(r))
	// team8 (900 milli) costs most, team0 and team1 least: together.
	got := cells(t, page, "buckets", "hour from")
	want := []string{"hour from", "team8", "team7", "team6", "team5", "team4", "team3", "team2", "other teams", "idle", "total"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("bucket heads %q, want %q", got, want)
	}
	// other: 0.1 + 0.2 of 36 c = 3.6 + 7.2 c; largest remainder over the 9
	// teams and idle gives team0 4 c (0.6), team1 7 c (0.2): 11 c.
	if c := cells(t, page, "buckets", "2026-11-30 00:00"); c[8] != "0.11" || c[10] != "3.24" {
		t.Errorf("bucket row %q, want other teams $0.11, total $3.24 (9 x 36 c)", c)
	}
	r, err = Build(alloc.Input{From: t0, To: t0 + hour, GPUs: []alloc.GPU{{Node: "n", UUID: "g", Model: "T4"}}, Prices: testPrices(t, "T4 0.36")})
	if err != nil {
		t.Fatal(err)
	}
	page = string(HTML(r))
	if !strings.Contains(page, "No pod held a GPU in the window.") || strings.Contains(page, "NaN") {
		t.Errorf("empty window page: %s", page)
	}
}

// TestBuildError: Compute's errors come back.
func TestBuildError(t *testing.T) {
	in := small(t)
	in.Holdings[0].GPU = "nope"
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), `GPU "nope" is not in the GPU list`) {
		t.Fatalf("err %v", err)
	}
}

// TestWrite makes the directory and writes index.html and report.json;
// htmlkit.CheckDir then refuses the directory without force.
func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	r, err := Build(small(t))
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, r, []byte(`{"rows":[]}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || string(js) != `{"rows":[]}`+"\n" {
		t.Fatalf("report.json %q %v", js, err)
	}
	page, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(page, HTML(r)) {
		t.Fatalf("index.html differs: %v", err)
	}
	if err := htmlkit.CheckDir(dir, false); err == nil {
		t.Error("CheckDir accepted a directory holding a report")
	}
}

// TestHTMLInChromium renders a report of 30 days (day buckets, 12 teams,
// 40 jobs) in headless Chromium (Debian package chromium, network off) at
// 800 and 1280 pixels wide: no console message (the page has no script;
// the probe added to a copy is the only one, and it logs nothing unless it
// fails), the page does not scroll sideways, the DOM holds the lead, and
// the screenshot shows the first team's line colour. Set GPUPLANE_REPORT_SHOTS
// to a directory to keep the screenshots (docs/cost-report-*.png).
func TestHTMLInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI is set but chromium is not installed")
		}
		t.Skip("chromium not installed")
	}
	dir := t.TempDir()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--hide-scrollbars",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--enable-logging=stderr", "--v=0",
		"--proxy-server=127.0.0.1:9", "--user-data-dir=" + filepath.Join(dir, "profile")}
	r, err := Build(month(t))
	if err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, r, nil)
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	probe := `<script>(function(){var o=[document.documentElement.scrollWidth,window.innerWidth];` +
		`document.querySelectorAll('.wrap').forEach(function(e){if(e.scrollWidth>e.clientWidth)o.push(e.firstElementChild.id)});` +
		`var p=document.createElement('pre');p.id='probe';p.textContent=o.join(' ');document.body.appendChild(p)})()</script></body>`
	measured := filepath.Join(dir, "measured.html")
	if err := os.WriteFile(measured, bytes.Replace(page, []byte("</body>"), []byte(probe), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	lead := regexp.MustCompile(`<p class="lead" id="lead">.*?</p>`).Find(page)
	for _, width := range []int{800, 1280} {
		shot := filepath.Join(dir, fmt.Sprintf("cost-report-%d.png", width))
		cmd := exec.Command(bin, append(args, fmt.Sprintf("--window-size=%d,2400", width), "--screenshot="+shot, "--dump-dom", "file://"+measured)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
		}
		for _, line := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(line, ":CONSOLE") {
				t.Errorf("%d px: console: %s", width, line)
			}
		}
		m := regexp.MustCompile(`<pre id="probe">([^<]*)</pre>`).FindSubmatch(dom)
		if m == nil {
			t.Fatalf("%d px: no measurement in the DOM", width)
		}
		f := strings.Fields(string(m[1]))
		sw, _ := strconv.Atoi(f[0])
		iw, _ := strconv.Atoi(f[1])
		if iw != width || sw > iw {
			t.Errorf("%d px: page is %d px wide in a %d px window", width, sw, iw)
		}
		if len(f) > 2 {
			t.Errorf("%d px: tables %v scroll sideways", width, f[2:])
		}
		if !bytes.Contains(dom, lead) {
			t.Errorf("%d px: rendered DOM lacks %s", width, lead)
		}
		fh, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%d px: screenshot: %v", width, err)
		}
		// The first team's line colour (#1f77b4) was painted.
		found := false
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && !found; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 == 0x1f && g>>8 == 0x77 && b>>8 == 0xb4 {
					found = true
					break
				}
			}
		}
		if !found {
			t.Errorf("%d px: screenshot has no pixel of the first team's band", width)
		}
		if keep := os.Getenv("GPUPLANE_REPORT_SHOTS"); keep != "" {
			data, _ := os.ReadFile(shot)
			if err := os.WriteFile(filepath.Join(keep, filepath.Base(shot)), data, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
}

// month is 30 days of 64 GPUs (A100-80GB, H100-80GB, T4), 12 teams and 40
// jobs with long names, utilisation samples every 10 minutes.
func month(t testing.TB) alloc.Input {
	in := alloc.Input{From: t0, To: t0 + 30*24*hour, Util: map[string][]alloc.Sample{}, Prices: cost.Default()}
	models := []string{"A100-80GB", "H100-80GB", "T4"}
	for g := range 64 {
		uuid := fmt.Sprintf("GPU-%04d", g)
		in.GPUs = append(in.GPUs, alloc.GPU{Node: fmt.Sprintf("node-%02d", g/8), UUID: uuid, Model: models[g/8%3]})
		for m := in.From; m < in.To; m += 10 * minute {
			in.Util[uuid] = append(in.Util[uuid], alloc.Sample{Time: m, Util: float64((g*7+int(m/hour))%100) / 100})
		}
	}
	for j := range 40 {
		for k := range 3 {
			g := (j*3 + k) % 64
			start := in.From + int64((j*17+k*5)%600)*hour
			in.Holdings = append(in.Holdings, alloc.Holding{Namespace: fmt.Sprintf("research-namespace-%d", j%12),
				Pod: fmt.Sprintf("pod-%d-%d", j, k), Job: fmt.Sprintf("pytorchjob-llm-finetune-experiment-%02d", j), Team: fmt.Sprintf("team-%02d", j%12),
				GPU: fmt.Sprintf("GPU-%04d", g), Share: alloc.Share{Kind: alloc.Whole}, Start: start, End: start + int64(24+j*5)*hour})
		}
	}
	return in
}

func TestRightsizingSection(t *testing.T) {
	// docs/cost.md's example: a whole A100 80GB at p95 0.10 and 9,000 MiB
	// peak gets 1g.10gb (9,856 MiB, 1/7): 1,400 c becomes 200 c, saving
	// 1,200 c. A job without samples has no recommendation and says why.
	recs, err := rightsize.Recommend([]rightsize.Job{
		{Name: "ml/train", Model: "A100-80GB", GPUs: 1, GPUHours: 7, CostCents: 1400, Util: []float64{0.1, 0.1}, MemoryMiB: []float64{9000, 8000}},
		{Name: "web/<b>", Model: "L4", GPUs: 1, GPUHours: 1, CostCents: 56},
	}, rightsize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if page := string(HTML(&Report{})); strings.Contains(page, "Right-sizing") {
		t.Error("a report without right-sizing has its section")
	}
	page := string(HTML(&Report{Rightsizing: recs}))
	for _, want := range []string{
		`<table id="rightsizing">`,
		`<tr><td class="name">ml/train</td><td>A100-80GB</td><td>1 GPU</td><td>0.100</td><td>9000</td><td>$14.00</td><td>1g.10gb</td><td>$12.00</td>`,
		`<tr><td class="name">web/&lt;b&gt;</td><td>L4</td><td>1 GPU</td><td>–</td><td>–</td><td>$0.56</td><td>–</td><td>$0.00</td><td class="name">no utilisation samples`,
		"2 of 2 jobs, by saving",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
