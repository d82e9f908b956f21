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
// a few milliseconds each time. Instead, each label set's text is rendered
// once per pod mapping (labelText), each family's header once, and each
// snapshot's series put once in the registry's order (families by name,
// series by label values); a scrape then writes the fresh series' lines, in
// the text format the registry's encoder writes (prometheus/common/expfmt,
// text_create.go). TestTextMatchesRegistry holds the two equal.

// textSnapshot is a snapshot's series in the registry's order.
type textSnapshot struct {
	families []textFamily // by name
}

// textFamily is one metric family and its series, in the registry's order.
type textFamily struct {
	fam    *descs
	series []textEntry
}

// textEntry is one series and the index of its group (which decides
// whether it is fresh).
type textEntry struct {
	group int
	m     *constMetric
}

// orderText orders the series of groups. It returns nil when a series
// would not pass the registry's checks or be written as plain legacy names:
// a label value that is not UTF-8, a metric or label name outside
// [a-zA-Z_:][a-zA-Z0-9_:]*, or two series of one family with the same label
// values.
func orderText(groups []group) *textSnapshot {
	byFam := make(map[*descs][]textEntry)
	for gi, g := range groups {
		for _, m := range g.metrics {
			if m.text == nil {
				return nil
			}
			byFam[m.fam] = append(byFam[m.fam], textEntry{group: gi, m: m})
		}
	}
	t := &textSnapshot{families: make([]textFamily, 0, len(byFam))}
	for f, entries := range byFam {
		slices.SortFunc(entries, func(a, b textEntry) int { return compareLabels(a.m.labels, b.m.labels) })
		for i := 1; i < len(entries); i++ {
			if compareLabels(entries[i-1].m.labels, entries[i].m.labels) == 0 {
				return nil
			}
		}
		t.families = append(t.families, textFamily{fam: f, series: entries})
	}
	slices.SortFunc(t.families, func(a, b textFamily) int { return strings.Compare(a.fam.name, b.fam.name) })
	for i, f := range t.families {
		if (i > 0 && t.families[i-1].fam.name == f.fam.name) || !model.LegacyValidation.IsValidMetricName(f.fam.name) {
			return nil // the registry would merge or refuse them
		}
	}
	return t
}

// textHeader returns a family's # HELP and # TYPE lines.
func textHeader(name, help string, counter bool) []byte {
	typ := "gauge"
	if counter {
		typ = "counter"
	}
	buf := append([]byte("# HELP "), name...)
	buf = append(buf, ' ')
	buf = appendEscaped(buf, help, false)
	buf = append(buf, "\n# TYPE "...)
	buf = append(buf, name...)
	buf = append(buf, ' ')
	buf = append(buf, typ...)
	return append(buf, '\n')
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

// lineBufs are scrapes' buffers of lines, reused.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, flushAt+4<<10); return &b }}

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
			return strings.Compare(f.fam.name, name)
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
	bp := lineBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	fams := snap.text.families
	for i, j := 0, 0; i < len(fams) || j < len(mfs); {
		if j == len(mfs) || (i < len(fams) && fams[i].fam.name < mfs[j].GetName()) {
			buf = writeFamily(out, buf, &fams[i], fresh)
			i++
			continue
		}
		if len(buf) > 0 {
			_, _ = out.Write(buf)
			buf = buf[:0]
		}
		_ = enc.Encode(mfs[j])
		j++
	}
	if len(buf) > 0 {
		_, _ = out.Write(buf)
	}
	*bp = buf
	lineBufs.Put(bp)
}

// flushAt is the size at which a scrape's buffer of lines is written out.
const flushAt = 32 << 10

// writeFamily appends f's header and fresh series, if any, to buf as
// expfmt's writeSample writes them, writing buf out when it passes flushAt.
func writeFamily(out io.Writer, buf []byte, f *textFamily, fresh []bool) []byte {
	header := false
	for _, e := range f.series {
		if !fresh[e.group] {
			continue
		}
		if !header {
			buf = append(buf, f.fam.header...)
			header = true
		}
		buf = append(buf, f.fam.name...)
		buf = append(buf, e.m.text...)
		buf = append(buf, ' ')
		buf = appendFloat(buf, e.m.value)
		buf = append(buf, '\n')
		if len(buf) >= flushAt {
			_, _ = out.Write(buf)
			buf = buf[:0]
		}
	}
	return buf
}
