// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package exporter

import (
	"cmp"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// A scrape of a dense node (8 GPUs, 56 MIG devices, 56 pods: 600 series)
// through the registry gathers, checks, sorts and encodes every series anew,
// a few milliseconds each time. The series of a snapshot change once per
// sample, so each snapshot is rendered once, in the text format the
// registry's encoder writes (prometheus/common/expfmt, text_create.go), in
// its order: families by name, series by label values. A scrape then writes
// the lines of fresh groups. TestTextMatchesRegistry holds the two equal.

// textSnapshot is a snapshot's series as text lines.
type textSnapshot struct {
	families []textFamily // by name
	buf      []byte       // every header and line
}

// textFamily is one metric family: its # HELP and # TYPE lines and its
// series, in the registry's order.
type textFamily struct {
	name   string
	header span
	series []textSeries
}

// textSeries is one series' line and the index of its group (which decides
// whether it is fresh).
type textSeries struct {
	group int
	line  span
}

// span is buf[start:end] of a textSnapshot.
type span struct{ start, end int }

type textEntry struct {
	group int
	m     *constMetric
}

// renderText renders groups. It returns nil when a series would not pass
// the registry's checks or be written as plain legacy names: a label value
// that is not UTF-8, a metric or label name outside [a-zA-Z_:][a-zA-Z0-9_:]*,
// or two series of one family with the same label values.
func renderText(groups []group, sizeHint int) *textSnapshot {
	byFam := make(map[*descs][]textEntry)
	for gi, g := range groups {
		for _, m := range g.metrics {
			byFam[m.fam] = append(byFam[m.fam], textEntry{group: gi, m: m})
		}
	}
	fams := make([]*descs, 0, len(byFam))
	for f := range byFam {
		fams = append(fams, f)
	}
	slices.SortFunc(fams, func(a, b *descs) int { return strings.Compare(a.name, b.name) })
	t := &textSnapshot{families: make([]textFamily, 0, len(fams)), buf: make([]byte, 0, sizeHint+sizeHint/8)}
	for i, f := range fams {
		if (i > 0 && fams[i-1].name == f.name) || !model.LegacyValidation.IsValidMetricName(f.name) {
			return nil // the registry would merge or refuse them
		}
		tf, ok := t.renderFamily(f, byFam[f])
		if !ok {
			return nil
		}
		t.families = append(t.families, tf)
	}
	return t
}

// renderFamily renders the series of family f.
func (t *textSnapshot) renderFamily(f *descs, entries []textEntry) (textFamily, bool) {
	slices.SortFunc(entries, func(a, b textEntry) int { return compareLabels(a.m.labels, b.m.labels) }) // no ties: equal label sets are refused below
	tf := textFamily{name: f.name, series: make([]textSeries, 0, len(entries))}
	start := len(t.buf)
	typ := "gauge"
	if f.counter {
		typ = "counter"
	}
	t.buf = append(t.buf, "# HELP "...)
	t.buf = append(t.buf, f.name...)
	t.buf = append(t.buf, ' ')
	t.buf = appendEscaped(t.buf, f.help, false)
	t.buf = append(t.buf, "\n# TYPE "...)
	t.buf = append(t.buf, f.name...)
	t.buf = append(t.buf, ' ')
	t.buf = append(t.buf, typ...)
	t.buf = append(t.buf, '\n')
	tf.header = span{start, len(t.buf)}
	for i, e := range entries {
		if i > 0 && compareLabels(entries[i-1].m.labels, e.m.labels) == 0 {
			return tf, false
		}
		start := len(t.buf)
		var ok bool
		if t.buf, ok = appendSeries(t.buf, f.name, e.m); !ok {
			return tf, false
		}
		tf.series = append(tf.series, textSeries{group: e.group, line: span{start, len(t.buf)}})
	}
	return tf, true
}

// compareLabels orders label sets as the registry does
// (client_golang's internal.MetricSorter): fewer labels first, then by the
// values in label name order.
func compareLabels(a, b []*dto.LabelPair) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	for i := range a {
		if c := strings.Compare(a[i].GetValue(), b[i].GetValue()); c != 0 {
			return c
		}
	}
	return 0
}

// appendSeries appends m's line, name{label="value",...} value, as
// expfmt's writeSample writes it; false when m has no label text.
func appendSeries(buf []byte, name string, m *constMetric) ([]byte, bool) {
	if m.text == nil {
		return buf, false
	}
	buf = append(buf, name...)
	buf = append(buf, m.text...)
	buf = append(buf, ' ')
	buf = appendFloat(buf, m.value)
	return append(buf, '\n'), true
}

// labelText returns labels as expfmt's writeNameAndLabelPairs writes
// them after the name, {name="value",...} (empty without labels), or nil
// when a value is not UTF-8 or a name not a legacy label name: the
// registry would refuse the series.
func labelText(labels []*dto.LabelPair) []byte {
	buf := []byte{}
	for i, lp := range labels {
		if !utf8.ValidString(lp.GetValue()) || !model.LegacyValidation.IsValidLabelName(lp.GetName()) {
			return nil
		}
		if i == 0 {
			buf = append(buf, '{')
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, lp.GetName()...)
		buf = append(buf, `="`...)
		buf = appendEscaped(buf, lp.GetValue(), true)
		buf = append(buf, '"')
	}
	if len(labels) > 0 {
		buf = append(buf, '}')
	}
	return buf
}

// appendEscaped escapes backslashes and newlines (and double quotes in a
// label value), as expfmt's writeEscapedString.
func appendEscaped(buf []byte, s string, quoted bool) []byte {
	for i := range len(s) {
		switch c := s[i]; {
		case c == '\\':
			buf = append(buf, `\\`...)
		case c == '\n':
			buf = append(buf, `\n`...)
		case c == '"' && quoted:
			buf = append(buf, `\"`...)
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

// appendFloat writes f as expfmt's writeFloat.
func appendFloat(buf []byte, f float64) []byte {
	switch {
	case f == 1:
		return append(buf, '1')
	case f == 0:
		return append(buf, '0')
	case f == -1:
		return append(buf, "-1"...)
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, +1):
		return append(buf, "+Inf"...)
	case math.IsInf(f, -1):
		return append(buf, "-Inf"...)
	}
	return strconv.AppendFloat(buf, f, 'g', -1, 64)
}

// gzipWriters are reused between scrapes, as promhttp does. They compress
// at gzip.BestSpeed, not promhttp's default level: on the dense node's
// 167 KB, 7.5 KB instead of 6.1 KB for about a third of the time.
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // a valid level: no error
	return w
}}

// serveText serves a scrape of the Exporter's series from the current
// snapshot's text and the other collectors' (Options.Collectors and the
// exporter's own counters) through others, as promhttp would serve the
// registry: the same headers and bytes once uncompressed. It does so only
// for the text format without dotted-name escaping, gzip or no
// compression, and no name filter; otherwise, and when the snapshot has no
// text or a family of others has one of the snapshot's names, it writes
// nothing and reports false.
func (e *Exporter) serveText(w http.ResponseWriter, r *http.Request, others prometheus.Gatherer) bool {
	snap := e.current.Load()
	if snap.text == nil || (r.URL != nil && r.URL.RawQuery != "") {
		return false
	}
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
	if format.FormatType() != expfmt.TypeTextPlain || format.ToEscapingScheme() == model.DotsEscaping {
		return false
	}
	gz := false
	switch strings.TrimSpace(strings.Join(r.Header.Values("Accept-Encoding"), ",")) {
	case "", "identity":
	case "gzip":
		gz = true
	default:
		return false
	}
	mfs, err := others.Gather()
	if err != nil {
		return false
	}
	for _, mf := range mfs {
		if _, found := slices.BinarySearchFunc(snap.text.families, mf.GetName(), func(f textFamily, name string) int {
			return strings.Compare(f.name, name)
		}); found {
			return false
		}
	}
	h := w.Header()
	h.Add("Vary", "Accept")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Content-Type", string(format))
	var out io.Writer = w
	if gz {
		h.Set("Content-Encoding", "gzip")
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(w)
		defer func() { _ = zw.Close(); gzipWriters.Put(zw) }()
		out = zw
	}
	e.writeText(out, format, snap, mfs)
	return true
}

// writeText writes the snapshot's fresh series and the families mfs,
// merged in name order as the registry orders families. Write errors (a
// client gone) end nothing early, as under promhttp's ContinueOnError.
func (e *Exporter) writeText(out io.Writer, format expfmt.Format, snap *snapshot, mfs []*dto.MetricFamily) {
	now := e.now()
	fresh := make([]bool, len(snap.groups))
	for i, g := range snap.groups {
		fresh[i] = g.at.IsZero() || now.Sub(g.at) <= e.opts.StaleAfter
	}
	enc := expfmt.NewEncoder(out, format)
	fams := snap.text.families
	for i, j := 0, 0; i < len(fams) || j < len(mfs); {
		if j == len(mfs) || (i < len(fams) && fams[i].name < mfs[j].GetName()) {
			snap.text.writeFamily(out, &fams[i], fresh)
			i++
			continue
		}
		_ = enc.Encode(mfs[j])
		j++
	}
}

// writeFamily writes f's header and its fresh series, if any; runs of
// consecutive fresh lines go in one write.
func (t *textSnapshot) writeFamily(out io.Writer, f *textFamily, fresh []bool) {
	run := span{-1, -1}
	flush := func() {
		if run.start >= 0 {
			_, _ = out.Write(t.buf[run.start:run.end])
		}
		run = span{-1, -1}
	}
	header := false
	for _, s := range f.series {
		if !fresh[s.group] {
			flush()
			continue
		}
		if !header {
			_, _ = out.Write(t.buf[f.header.start:f.header.end])
			header = true
		}
		if run.end != s.line.start {
			flush()
			run.start = s.line.start
		}
		run.end = s.line.end
	}
	flush()
}
