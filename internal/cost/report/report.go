// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package report makes the HTML cost report of gpuplane cost --out DIR:
// cost by team over time, the top jobs with their efficiency,
// idle cost by GPU model and a histogram of efficiency, from one
// alloc.Input. The page is self-contained (no script, no network) and
// draws its charts with internal/htmlkit, as the simulator's report does;
// the JSON written beside it is the command's own --format json output,
// passed in as bytes.
//
// Over time, the window is cut into buckets on UTC boundaries: hours when
// the window is at most 2 days long, else days; the first and last bucket
// may be partial. Each bucket is its own cost/alloc window (alloc.Compute
// on the holdings and samples that bear on it), so conservation holds per
// bucket to the cent: its teams' and idle rows add up to its AssetCents.
// The buckets' exact costs add up to the window's exact cost; rounded to
// cents, each bucket is within half a cent of its exact cost, so the
// buckets' cents may differ from the window's by less than half a cent per
// bucket.
package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/gpuplane/gpuplane/internal/cost/alloc"
	"github.com/gpuplane/gpuplane/internal/cost/rightsize"
)

// MaxHourlyWindow is the longest window cut into hourly buckets, in
// milliseconds (2 days); longer windows are cut into days.
const MaxHourlyWindow = 2 * 24 * 3_600_000

const (
	msPerHour = 3_600_000
	msPerDay  = 24 * msPerHour
)

// Bucket is the cost of one bucket of the window by team.
type Bucket struct {
	// Start and End bound the bucket [Start, End), in Unix milliseconds.
	Start, End int64
	// Teams is the bucket's ledger by team, with its idle rows.
	Teams alloc.Report
}

// Report is what the HTML page shows.
type Report struct {
	// From and To bound the window [From, To), in Unix milliseconds.
	From, To int64
	// BucketMs is the buckets' length (3,600,000 or 86,400,000 ms).
	BucketMs int64
	Buckets  []Bucket
	// Jobs, Teams and Models are the whole window's ledger by job, team
	// and GPU model.
	Jobs, Teams, Models alloc.Report
	// Warnings are the whole window's cost/alloc warnings.
	Warnings []string
	// Rightsizing is internal/cost/rightsize's outcome per job, largest saving
	// first; the caller sets it (Build leaves it empty, and the page then
	// has no right-sizing section).
	Rightsizing []rightsize.Recommendation
}

// BucketLength returns the bucket length for a window of span
// milliseconds: an hour up to MaxHourlyWindow, else a day.
func BucketLength(span int64) int64 {
	if span <= MaxHourlyWindow {
		return msPerHour
	}
	return msPerDay
}

// Build accounts for the window of in as a whole (by job, team and model)
// and bucket by bucket (by team). Errors are alloc.Compute's.
func Build(in alloc.Input) (*Report, error) {
	l, err := alloc.Compute(in)
	if err != nil {
		return nil, err
	}
	r := &Report{From: in.From, To: in.To, BucketMs: BucketLength(in.To - in.From),
		Jobs: l.Report(alloc.ByJob), Teams: l.Report(alloc.ByTeam), Models: l.Report(alloc.ByModel), Warnings: l.Warnings}
	hold := in.MaxSampleHold
	if hold == 0 {
		hold = alloc.DefaultMaxSampleHold
	}
	// Each GPU's samples in time order (copied and sorted only when they
	// are not, as Prometheus returns them), so that a bucket takes the
	// samples in [start-hold, end): an earlier sample stands no later than
	// start.
	util := make(map[string][]alloc.Sample, len(in.Util))
	for uuid, s := range in.Util {
		if !sort.SliceIsSorted(s, func(i, j int) bool { return s[i].Time < s[j].Time }) {
			s = append([]alloc.Sample(nil), s...)
			sort.Slice(s, func(i, j int) bool { return s[i].Time < s[j].Time })
		}
		util[uuid] = s
	}
	for start := in.From; start < in.To; {
		end := min((floorDiv(start, r.BucketMs)+1)*r.BucketMs, in.To)
		b := in
		b.From, b.To = start, end
		b.Holdings = nil
		for _, h := range in.Holdings {
			if h.Start < end && h.End > start {
				b.Holdings = append(b.Holdings, h)
			}
		}
		b.Util = make(map[string][]alloc.Sample, len(util))
		for uuid, s := range util {
			i := sort.Search(len(s), func(i int) bool { return s[i].Time >= start-hold })
			j := sort.Search(len(s), func(i int) bool { return s[i].Time >= end })
			if i < j {
				b.Util[uuid] = s[i:j]
			}
		}
		bl, err := alloc.Compute(b)
		if err != nil {
			return nil, fmt.Errorf("bucket %s: %w", stamp(start, r.BucketMs), err)
		}
		r.Buckets = append(r.Buckets, Bucket{Start: start, End: end, Teams: bl.Report(alloc.ByTeam)})
		start = end
	}
	return r, nil
}

// floorDiv returns a / b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// stamp formats a Unix millisecond time in UTC: the date, and the time of
// day for hourly buckets.
func stamp(ms, bucket int64) string {
	t := time.UnixMilli(ms).UTC()
	if bucket >= msPerDay && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04")
}
