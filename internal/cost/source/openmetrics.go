// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/gpuplane/gpuplane/api/metrics"
)

// rawSeries is one series of a file: its samples, in file order.
type rawSeries struct {
	key    string // the metric and labels as text: name{label="value", ...}
	labels map[string]string
	t      []int64
	v      []float64
	line   []int32 // the file line of each sample
}

// File is an OpenMetrics file's samples of the metrics read (Metrics); the
// other metrics are skipped.
type File struct {
	name   string
	series map[string][]*rawSeries // by metric name
	// MinTime and MaxTime bound the samples read, in Unix milliseconds;
	// minLine and maxLine are their lines.
	MinTime, MaxTime int64
	minLine, maxLine int
	// Samples is the number of samples kept.
	Samples int
}

// ParseOpenMetrics reads an OpenMetrics text file (the format `promtool tsdb
// create-blocks-from openmetrics` backfills: every sample with a timestamp,
// ending with "# EOF") with Prometheus's own parser. Errors name the file
// and line. Timestamps are Unix seconds (OpenMetrics), from 1970 to 9999.
// Lines may end with CR LF (a file written on Windows): the parser takes
// LF only (a CR is part of the line: `invalid metric type "gauge\r"`), so
// a CR before each LF, and at the very end, is dropped first; no line is
// removed, so the lines in errors are the file's.
// A gpuplane_device_health value outside 0..1 is refused with its line.
func ParseOpenMetrics(name string, data []byte) (*File, error) {
	data = stripCR(data)
	want := map[string]bool{}
	for _, m := range Metrics {
		want[m] = true
	}
	f := &File{name: name, series: map[string][]*rawSeries{}, MinTime: math.MaxInt64, MaxTime: math.MinInt64}
	byKey := map[string]*rawSeries{}
	p := textparse.NewOpenMetricsParser(data, labels.NewSymbolTable())
	line := 0 // every entry of an OpenMetrics text is one line
	var lset labels.Labels
	for {
		e, err := p.Next()
		line++
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if e != textparse.EntrySeries {
			if e == textparse.EntryHistogram {
				return nil, fmt.Errorf("%s:%d: native histogram: not read", name, line)
			}
			continue
		}
		_, ts, v := p.Series()
		p.Labels(&lset)
		metric := lset.Get(labels.MetricName)
		if !want[metric] {
			continue
		}
		if err := checkSample(metric, ts, v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		key := metric + lset.DropMetricName().String()
		if err := checkHealth(metric, key, v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		f.add(byKey, metric, key, lset, *ts, v, line)
	}
	if f.Samples == 0 {
		return nil, fmt.Errorf("%s: no samples of %v", name, Metrics)
	}
	for _, ss := range f.series {
		for _, s := range ss {
			if err := sortSamples(name, s); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// checkSample refuses a sample of metric without a timestamp, with one out
// of range, or with a value that is not a number.
func checkSample(metric string, ts *int64, v float64) error {
	if ts == nil {
		return fmt.Errorf("%s: sample without a timestamp (backfilled samples need one)", metric)
	}
	if *ts < 0 || *ts > maxTime {
		// The parser converts seconds to int64 milliseconds: one beyond
		// 2^63 ms comes back as the least int64 (amd64) or the most
		// (arm64).
		at := fmt.Sprintf("%.3f", float64(*ts)/1000)
		if *ts == math.MinInt64 || *ts == math.MaxInt64 {
			at = "out of range"
		}
		return fmt.Errorf("%s: timestamp %s: want Unix seconds from 1970 to 9999 (OpenMetrics timestamps are seconds, not milliseconds)", metric, at)
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s: value %v", metric, v)
	}
	return nil
}

// add appends the sample (ts, v) of line to its series, key, made on
// first sight from lset, and widens the file's time range.
func (f *File) add(byKey map[string]*rawSeries, metric, key string, lset labels.Labels, ts int64, v float64, line int) {
	s := byKey[key]
	if s == nil {
		s = &rawSeries{key: key, labels: lset.WithoutEmpty().Map()}
		delete(s.labels, labels.MetricName)
		byKey[key] = s
		f.series[metric] = append(f.series[metric], s)
	}
	s.t = append(s.t, ts)
	s.v = append(s.v, v)
	s.line = append(s.line, int32(line))
	if ts < f.MinTime {
		f.MinTime, f.minLine = ts, line
	}
	if ts > f.MaxTime {
		f.MaxTime, f.maxLine = ts, line
	}
	f.Samples++
}

// stripCR returns data with the CR of each CR LF line end, and a CR at
// the very end, removed; data itself when it has none.
func stripCR(data []byte) []byte {
	if !bytes.Contains(data, []byte("\r\n")) && !bytes.HasSuffix(data, []byte("\r")) {
		return data
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	return bytes.TrimSuffix(data, []byte("\r"))
}

// maxTime is the last millisecond of year 9999, the last time RFC 3339
// (and the JSON report) can write.
const maxTime = 253402300799999

// sortSamples sorts s's samples by time and refuses two at one time,
// naming the file name and both lines.
func sortSamples(name string, s *rawSeries) error {
	if !sort.SliceIsSorted(s.t, func(i, j int) bool { return s.t[i] < s.t[j] }) {
		idx := make([]int, len(s.t))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.t[idx[a]] < s.t[idx[b]] })
		t, v, l := make([]int64, len(idx)), make([]float64, len(idx)), make([]int32, len(idx))
		for i, k := range idx {
			t[i], v[i], l[i] = s.t[k], s.v[k], s.line[k]
		}
		s.t, s.v, s.line = t, v, l
	}
	for i := 1; i < len(s.t); i++ {
		if s.t[i] == s.t[i-1] {
			return fmt.Errorf("%s:%d: a second sample of %s at %s (the first is on line %d)", name, s.line[i], s.key, fmtTime(s.t[i]), s.line[i-1])
		}
	}
	return nil
}

// ReadOpenMetrics evaluates the file's series on w's grid as Prometheus's
// range query of last_over_time(metric[Step - 1ms]) does (ReadPrometheus):
// at each grid time t, the last sample in [t-Step+1ms, t]; and maps them.
// A step other than the file's sample interval (Interval) is refused: a
// shorter one would leave most steps without a sample, counted as not held;
// a longer one would count a series sampled at any time of a step for the
// whole step and skip the step's other samples. A grid
// off the samples' phase is warned: one where a sample lies more before
// the grid time it counts at than on DefaultWindow's grid, by over a
// hundredth of a step and a second.
func ReadOpenMetrics(f *File, w Window) (*Result, error) {
	if iv, metric, _ := f.interval(); w.Step > 0 && w.Step < iv {
		return nil, fmt.Errorf("step %v is shorter than the file's sample interval, %v (%s): steps without a sample would count as not held; want a step of %v",
			dur(w.Step), dur(iv), metric, dur(iv))
	} else if iv > 0 && w.Step > iv {
		return nil, fmt.Errorf("step %v is longer than the file's sample interval, %v (%s): a series sampled at any time of a step would count for the whole step, and the other samples would be skipped; want a step of %v (leave --step out)",
			dur(w.Step), dur(iv), metric, dur(iv))
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	b := newBuilder(w)
	last := w.last()
	var gt []int64
	var gv []float64
	var gl []int32
	lag := int64(0)               // the most time from a sample to the grid time it counts at
	lines := map[string][]int32{} // series key -> line of each grid value
	b.where = func(key string, t int64) string {
		g := lines[key]
		if i := (t - w.From) / w.Step; i >= 0 && i < int64(len(g)) && g[i] > 0 {
			return fmt.Sprintf("%s:%d", f.name, g[i])
		}
		return ""
	}
	for _, name := range Metrics {
		for _, s := range f.series[name] {
			// Each sample lies in (t-Step, t] of exactly one grid time t,
			// the first at or after it; of several, the last counts.
			gt, gv, gl = gt[:0], gv[:0], gl[:0]
			for k, ts := range s.t {
				if ts <= w.From-w.Step || ts > last {
					continue
				}
				t := w.From
				if ts > w.From {
					t += (ts - w.From + w.Step - 1) / w.Step * w.Step
				}
				lag = max(lag, t-ts)
				if n := len(gt); n > 0 && gt[n-1] == t {
					gv[n-1], gl[n-1] = s.v[k], s.line[k]
					continue
				}
				gt = append(gt, t)
				gv = append(gv, s.v[k])
				gl = append(gl, s.line[k])
			}
			if name == metrics.DeviceAllocationShare && len(gt) > 0 {
				// The lines of the share values, for the warnings.
				g := make([]int32, w.index(gt[len(gt)-1])+1)
				for i, t := range gt {
					g[w.index(t)] = gl[i]
				}
				lines[s.key] = g
			}
			if err := b.add(name, s.key, s.labels, gt, gv); err != nil {
				return nil, err
			}
		}
	}
	if p, spread := f.phase(f.times(), w.Step); lag > spread+max(w.Step/100, 1000) {
		// The grid time on the phase nearest From.
		d := ((w.From-f.MinTime-p)%w.Step + w.Step) % w.Step
		on := w.From - d
		if 2*d > w.Step {
			on += w.Step
		}
		b.warn(fmt.Sprintf("the grid from %s is off the samples' phase: samples count up to %v after their time, so holdings shift or break; a window from %s would count each sample at most %v after it",
			fmtTime(w.From), dur(lag), fmtTime(on), dur(spread)))
	}
	return b.finish()
}

// LoadOpenMetrics reads the OpenMetrics file at path; "-" is standard
// input.
func LoadOpenMetrics(path string) (*File, error) {
	if path == "-" {
		data, err := io.ReadAll(os.Stdin)
		if err != nil {
			return nil, fmt.Errorf("standard input: %w", err)
		}
		return ParseOpenMetrics("standard input", data)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseOpenMetrics(path, data)
}

// Interval returns the file's sample interval, in milliseconds: for each
// metric the median time between two consecutive samples of one of its
// series, and of those the longest, so that a step of Interval leaves no
// series of the file with steps between samples; rounded to whole seconds
// when within 1% of them, so that a few milliseconds of scrape jitter
// (samples at 29m59.95s and 30m0.05s) give 30m. DefaultStep when no series
// has two samples.
func (f *File) Interval() int64 {
	if iv, _, _ := f.interval(); iv > 0 {
		return iv
	}
	return DefaultStep
}

// interval returns Interval, the metric it comes from, and the finest of
// the metrics' intervals (the shortest median); 0 when no series has two
// samples.
func (f *File) interval() (iv int64, metric string, fine int64) {
	best := int64(0)
	for _, name := range Metrics {
		var gaps []int64
		for _, s := range f.series[name] {
			for i := 1; i < len(s.t); i++ {
				gaps = append(gaps, s.t[i]-s.t[i-1])
			}
		}
		if len(gaps) == 0 {
			continue
		}
		slices.Sort(gaps)
		m := gaps[(len(gaps)-1)/2] // the lower median: a sample interval
		if r := (m + 500) / 1000 * 1000; r > 0 && 100*abs(m-r) <= m {
			m = r
		}
		if m > best {
			best, metric = m, name
		}
		if fine == 0 || m < fine {
			fine = m
		}
	}
	return best, metric, fine
}

// DefaultWindow returns the window over the whole file at step: its grid
// is placed in the widest gap between the samples' times modulo step, so
// that every grid time has the samples just before it, whatever their
// phase or jitter (samples at 23:59:59.95 and 00:00:00.05 both count at
// 00:00:00.05); From is the first grid time at or after the first sample,
// To the first time on From's grid at the finest metric's interval at or
// after the data's end, the last sample plus that interval (a step longer
// than the finest interval leaves a part of a step at the end). For samples on whole steps of the interval
// (examples/cost/day.om) that is [first sample, last sample + interval).
// A timestamp far from all others (a gap of more than half the file's span
// between it and the rest, e.g. a 1970 or 2030 sample in a day of 2026)
// is refused, naming its line: it would stretch the window over years of
// idle GPUs; an explicit window reads such a file.
func (f *File) DefaultWindow(step int64) (Window, error) {
	if step <= 0 {
		return Window{}, fmt.Errorf("step %d ms: want a positive step", step)
	}
	all := f.times()
	// A stray timestamp: the widest gap between two sample times.
	gi := 0
	for i := 1; i < len(all); i++ {
		if all[i]-all[i-1] > all[gi+1]-all[gi] {
			gi = i - 1
		}
	}
	if len(all) > 1 {
		gap, total := all[gi+1]-all[gi], all[len(all)-1]-all[0]
		if 2*gap > total && gap > 10*f.Interval() {
			line, t, rest := f.minLine, all[0], fmt.Sprintf("%s to %s", fmtTime(all[gi+1]), fmtTime(all[len(all)-1]))
			if gi+1 > len(all)-gi-1 { // fewer samples after the gap
				line, t, rest = f.maxLine, all[len(all)-1], fmt.Sprintf("%s to %s", fmtTime(all[0]), fmtTime(all[gi]))
			}
			return Window{}, fmt.Errorf("%s:%d: timestamp %s lies %v from the other samples (%s): a stray timestamp? give the window (--from, --to) to read the file anyway",
				f.name, line, fmtTime(t), span(gap), rest)
		}
	}
	p, _ := f.phase(all, step)
	// To: the data's end, one sample interval past the last sample: the
	// finest metric's interval (a share series sampled every hour among
	// others every 30 minutes ends 30 minutes past the last sample, not an
	// hour), on the grid from From at that interval, so a last step may be
	// a part of one.
	w := Window{From: f.MinTime + p, Step: step}
	fine := step
	if _, _, m := f.interval(); m > 0 {
		fine = m
	}
	w.To = w.From + max((f.MaxTime+fine-w.From+fine-1)/fine, 1)*fine
	return w, nil
}

// phase returns where a grid of step best lies on the sample times all
// (sorted): at f.MinTime + p + k*step, p in [0, step), the end of the
// widest gap between the times' offsets modulo step (circularly); and the
// offsets' spread, step less that gap, the most a sample then lies before
// the grid time it counts at (0 for samples on whole steps).
func (f *File) phase(all []int64, step int64) (p, spread int64) {
	off := make([]int64, len(all))
	for i, t := range all {
		off[i] = (t - f.MinTime) % step
	}
	slices.Sort(off)
	off = slices.Compact(off)
	// Of equal gaps the first, which keeps From nearest the first sample.
	widest := int64(-1)
	for i := range off {
		next := off[0] + step // the gap after the last wraps round
		if i+1 < len(off) {
			next = off[i+1]
		}
		if next-off[i] > widest {
			p, widest = off[i], next-off[i]
		}
	}
	return p, step - widest
}

// times returns the file's sample times, sorted.
func (f *File) times() []int64 {
	var all []int64
	for _, ss := range f.series {
		for _, s := range ss {
			all = append(all, s.t...)
		}
	}
	slices.Sort(all)
	return all
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
