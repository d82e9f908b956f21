// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/cluster"
)

// alibaba2025Columns are the columns ReadAlibaba2025 needs. The file has
// more (limits, RDMA, disk, max_instance_per_node, scheduled_time) that the
// simulator does not model; they are read past.
var alibaba2025Columns = []string{"instance_sn", "cpu_request", "gpu_request", "memory_request", "creation_time", "deletion_time"}

// Bounds on the Alibaba 2025 columns, so that a bad file gives a short
// error, not an absurd pod.
const (
	maxVCPU   = 1 << 20 // vCPU per instance
	maxMemGiB = 1 << 30 // GiB per instance
)

// ReadAlibaba2025 reads the instance list of the Alibaba 2025 GPU trace
// (github.com/alibaba/clusterdata, cluster-trace-gpu-v2025,
// disaggregated_DLRM_trace.csv; NSDI 2025) as pods. Column mapping:
//
//   - instance_sn → Name;
//   - cpu_request (vCPU, decimal) → CPUMilli: × 1000, rounded to the
//     nearest millicore;
//   - memory_request (GiB, decimal) → MemoryMiB: × 1024, rounded to the
//     nearest MiB;
//   - gpu_request (GPUs: 0 on the CN rows, 1 on the HN rows of the
//     published file) → a whole number n ≥ 1 is NumGPU n of GPUMilli 1000
//     each; a fraction in (0, 1) is a share of one GPU, NumGPU 1 of
//     GPUMilli round(1000 × share); 0 is a CPU-only pod;
//   - creation_time, deletion_time (seconds) → Creation, Deletion. An
//     empty or NaN creation time marks an instance that existed before the
//     trace window: it is present from time 0. An empty or NaN deletion
//     time is kept as NaN (the pod runs to the end).
//
// The trace names no GPU model, so GPUSpec is "" (any model); QoS and Phase
// are "". Errors name the file, the line and the column.
func ReadAlibaba2025(file string, r io.Reader) ([]PodSpec, error) {
	cr := csv.NewReader(&lineLimit{r: r, line: 1}) // a huge value is refused before it is read whole
	cr.ReuseRecord = true
	col, err := alibaba2025Header(file, cr)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var out []PodSpec
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, csvErr(file, err)
		}
		line, _ := cr.FieldPos(0)
		if line > math.MaxInt32 {
			return nil, &Error{File: file, Line: line, Err: fmt.Errorf("line beyond %d", math.MaxInt32)}
		}
		p, err := alibaba2025Row{file: file, line: line, rec: rec, col: col}.pod(seen)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Line: 1, Err: errors.New("no pods")}
	}
	return out, nil
}

// alibaba2025Header reads the header and returns the index of each column
// by name (the first, if named twice).
func alibaba2025Header(file string, cr *csv.Reader) (map[string]int, error) {
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &Error{File: file, Line: 1, Err: errors.New("empty file")}
	} else if err != nil {
		return nil, csvErr(file, err)
	}
	col := make(map[string]int, len(header))
	for i, h := range header {
		h = strings.TrimPrefix(strings.TrimSpace(h), "\ufeff")
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, c := range alibaba2025Columns {
		if _, ok := col[c]; !ok {
			return nil, &Error{File: file, Line: 1, Column: c, Err: errors.New("missing column")}
		}
	}
	return col, nil
}

// alibaba2025Row is one instance line of the trace.
type alibaba2025Row struct {
	file string
	line int
	rec  []string
	col  map[string]int
}

// pod returns the row's pod; seen has the line of each instance name read
// so far.
func (r alibaba2025Row) pod(seen map[string]int) (PodSpec, error) {
	p := PodSpec{Line: int32(r.line), Name: strings.TrimSpace(r.rec[r.col["instance_sn"]])}
	if p.Name == "" {
		return p, r.bad("instance_sn", "empty instance name")
	}
	if len(p.Name) > MaxNameLen {
		return p, r.bad("instance_sn", "name %s longer than %d bytes", Quote(p.Name), MaxNameLen)
	}
	if first, dup := seen[p.Name]; dup {
		return p, r.bad("instance_sn", "instance %s already defined on line %d", Quote(p.Name), first)
	}
	seen[p.Name] = r.line
	cpu, err := r.num("cpu_request", maxVCPU)
	if err != nil {
		return p, err
	}
	mem, err := r.num("memory_request", maxMemGiB)
	if err != nil {
		return p, err
	}
	p.CPUMilli, p.MemoryMiB = int64(math.Round(cpu*1000)), int64(math.Round(mem*1024))
	if err := r.gpus(&p); err != nil {
		return p, err
	}
	if p.Creation, err = r.time("creation_time"); err != nil {
		return p, err
	}
	if math.IsNaN(p.Creation) {
		p.Creation = 0 // existed before the window
	}
	if p.Deletion, err = r.time("deletion_time"); err != nil {
		return p, err
	}
	if p.Deletion < p.Creation {
		return p, r.bad("deletion_time", "deletion %v before creation %v", p.Deletion, p.Creation)
	}
	p.Scheduled = math.NaN()
	return p, nil
}

// gpus sets p's GPUs from gpu_request: whole GPUs, or a share of one.
func (r alibaba2025Row) gpus(p *PodSpec) error {
	g, err := r.num("gpu_request", maxGPUsPerNode)
	if err != nil {
		return err
	}
	switch {
	case g == 0:
	case g < 1:
		p.NumGPU, p.GPUMilli = 1, int16(math.Round(g*cluster.MilliGPU))
		if p.GPUMilli == 0 {
			return r.bad("gpu_request", "share %v of a GPU is below 1 milli-GPU", g)
		}
	case g == math.Trunc(g):
		p.NumGPU, p.GPUMilli = int8(g), cluster.MilliGPU
	default:
		return r.bad("gpu_request", "%v GPUs: more than one GPU must be whole", g)
	}
	return nil
}

// bad is an error at column c of the row.
func (r alibaba2025Row) bad(c string, format string, a ...any) error {
	return &Error{File: r.file, Line: r.line, Column: c, Err: fmt.Errorf(format, a...)}
}

// num reads column c, a number in [0, hi].
func (r alibaba2025Row) num(c string, hi float64) (float64, error) {
	s := strings.TrimSpace(r.rec[r.col[c]])
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(v):
		return 0, r.bad(c, "%s is not a number", Quote(s))
	case v < 0:
		return 0, r.bad(c, "negative value %s", s)
	case v > hi:
		return 0, r.bad(c, "value %s above %v", s, hi)
	}
	return v, nil
}

// time reads column c, a time in seconds; empty or NaN is NaN.
func (r alibaba2025Row) time(c string) (float64, error) {
	s := strings.TrimSpace(r.rec[r.col[c]])
	if s == "" || s == "NaN" || s == "nan" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(v) || math.IsInf(v, 0):
		return 0, r.bad(c, "%s is not a time in seconds", Quote(s))
	case v < 0:
		return 0, r.bad(c, "negative time %s", s)
	case v > maxSeconds:
		return 0, r.bad(c, "time %v s is beyond %v s", v, float64(maxSeconds))
	}
	return v, nil
}

// csvErr turns an encoding/csv error into an *Error naming the file and line.
func csvErr(file string, err error) error {
	var pe *csv.ParseError
	var e *Error
	if errors.As(err, &e) { // from lineLimit
		return &Error{File: file, Line: e.Line, Err: e.Err}
	}
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Line, Err: pe.Err}
	}
	return &Error{File: file, Err: err}
}

// IsAlibaba2025 reports whether header (a CSV file's first line) is the
// header of the Alibaba 2025 GPU trace: it names instance_sn and
// gpu_request.
func IsAlibaba2025(header []byte) bool {
	h := string(bytes.TrimPrefix(header, []byte("\ufeff")))
	names := map[string]bool{}
	for _, f := range strings.Split(h, ",") {
		names[strings.TrimSpace(f)] = true
	}
	return names["instance_sn"] && names["gpu_request"]
}

// ReadPodsAny reads a pod list in either format, told apart by its header:
// the Alibaba 2025 trace (ReadAlibaba2025) or an openb pod list (ReadPods).
func ReadPodsAny(file string, r io.Reader) ([]PodSpec, error) {
	// A seekable *os.File goes to ReadPods as itself, which keeps its
	// fast path (see ReadPods).
	if f, ok := r.(*os.File); ok {
		if off, err := f.Seek(0, io.SeekCurrent); err == nil {
			head := make([]byte, 4096)
			n, err := io.ReadFull(f, head)
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return nil, &Error{File: file, Line: 1, Err: err}
			}
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				return nil, &Error{File: file, Line: 1, Err: err}
			}
			if IsAlibaba2025(firstLine(head[:n])) {
				return ReadAlibaba2025(file, f)
			}
			return ReadPods(file, f)
		}
	}
	br := bufio.NewReader(r)
	head, _ := br.Peek(4096)
	if IsAlibaba2025(firstLine(head)) {
		return ReadAlibaba2025(file, br)
	}
	return ReadPods(file, br)
}

// firstLine returns b up to its first line break.
func firstLine(b []byte) []byte {
	if i := bytes.IndexAny(b, "\r\n"); i >= 0 {
		return b[:i]
	}
	return b
}

// ReadPodsAnyFile opens path and reads it with ReadPodsAny.
func ReadPodsAnyFile(path string) ([]PodSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPodsAny(path, f)
}
