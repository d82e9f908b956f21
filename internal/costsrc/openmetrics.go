package costsrc

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"
)

// rawSeries is one series of a file: its samples, in file order.
type rawSeries struct {
	key    string // the labels as text
	labels map[string]string
	t      []int64
	v      []float64
}

// File is an OpenMetrics file's samples of the metrics read (Metrics); the
// other metrics are skipped.
type File struct {
	series map[string][]*rawSeries // by metric name
	// MinTime and MaxTime bound the samples read, in Unix milliseconds.
	MinTime, MaxTime int64
	// Samples is the number of samples kept.
	Samples int
}

// ParseOpenMetrics reads an OpenMetrics text file (the format `promtool tsdb
// create-blocks-from openmetrics` backfills: every sample with a timestamp,
// ending with "# EOF") with Prometheus's own parser. Errors name the file
// and line.
func ParseOpenMetrics(name string, data []byte) (*File, error) {
	want := map[string]bool{}
	for _, m := range Metrics {
		want[m] = true
	}
	f := &File{series: map[string][]*rawSeries{}, MinTime: math.MaxInt64, MaxTime: math.MinInt64}
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
		if ts == nil {
			return nil, fmt.Errorf("%s:%d: %s: sample without a timestamp (backfilled samples need one)", name, line, metric)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s:%d: %s: value %v", name, line, metric, v)
		}
		key := lset.String()
		s := byKey[key]
		if s == nil {
			s = &rawSeries{key: key, labels: lset.WithoutEmpty().Map()}
			delete(s.labels, labels.MetricName)
			byKey[key] = s
			f.series[metric] = append(f.series[metric], s)
		}
		s.t = append(s.t, *ts)
		s.v = append(s.v, v)
		f.MinTime, f.MaxTime = min(f.MinTime, *ts), max(f.MaxTime, *ts)
		f.Samples++
	}
	if f.Samples == 0 {
		return nil, fmt.Errorf("%s: no samples of %v", name, Metrics)
	}
	for _, ss := range f.series {
		for _, s := range ss {
			if err := sortSamples(s); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
		}
	}
	return f, nil
}

// sortSamples sorts s's samples by time and refuses two at one time.
func sortSamples(s *rawSeries) error {
	if !sort.SliceIsSorted(s.t, func(i, j int) bool { return s.t[i] < s.t[j] }) {
		idx := make([]int, len(s.t))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return s.t[idx[a]] < s.t[idx[b]] })
		t, v := make([]int64, len(idx)), make([]float64, len(idx))
		for i, k := range idx {
			t[i], v[i] = s.t[k], s.v[k]
		}
		s.t, s.v = t, v
	}
	for i := 1; i < len(s.t); i++ {
		if s.t[i] == s.t[i-1] {
			return fmt.Errorf("series %v: two samples at %d ms", s.labels, s.t[i])
		}
	}
	return nil
}

// ReadOpenMetrics evaluates the file's series on w's grid as Prometheus's
// range query of last_over_time(metric[Step - 1ms]) does (ReadPrometheus):
// at each grid time t, the last sample in [t-Step+1ms, t]; and maps them.
func ReadOpenMetrics(f *File, w Window) (*Result, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	b := newBuilder(w)
	last := w.last()
	var gt []int64
	var gv []float64
	for _, name := range Metrics {
		for _, s := range f.series[name] {
			// Each sample lies in (t-Step, t] of exactly one grid time t,
			// the first at or after it; of several, the last counts.
			gt, gv = gt[:0], gv[:0]
			for k, ts := range s.t {
				if ts <= w.From-w.Step || ts > last {
					continue
				}
				t := w.From
				if ts > w.From {
					t += (ts - w.From + w.Step - 1) / w.Step * w.Step
				}
				if n := len(gt); n > 0 && gt[n-1] == t {
					gv[n-1] = s.v[k]
					continue
				}
				gt = append(gt, t)
				gv = append(gv, s.v[k])
			}
			if err := b.add(name, s.key, s.labels, gt, gv); err != nil {
				return nil, err
			}
		}
	}
	return b.finish()
}

// LoadOpenMetrics reads the OpenMetrics file at path.
func LoadOpenMetrics(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseOpenMetrics(path, data)
}

// Interval returns the file's sample interval, in milliseconds: the
// shortest time between two samples of one series (DefaultStep when no
// series has two).
func (f *File) Interval() int64 {
	best := int64(0)
	for _, ss := range f.series {
		for _, s := range ss {
			for i := 1; i < len(s.t); i++ {
				if d := s.t[i] - s.t[i-1]; best == 0 || d < best {
					best = d
				}
			}
		}
	}
	if best == 0 {
		return DefaultStep
	}
	return best
}
