// Package trace reads GPU cluster workloads: the node and pod lists of the
// Alibaba openb trace (github.com/alibaba/clusterdata,
// cluster-trace-gpu-v2023; Weng et al., USENIX ATC 2023), and generates the
// built-in workload.
//
// Readers validate every row: an error names the file, the line and the
// column, and no input makes them panic.
package trace

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// NodeSpec is one row of an openb node list.
type NodeSpec struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	GPUs                int
	// Model is the GPU model ("" for a CPU-only node).
	Model string
	Line  int
}

// PodSpec is one row of an openb pod list.
type PodSpec struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// NumGPU GPUs of GPUMilli milli-GPU each.
	NumGPU   int
	GPUMilli int64
	// GPUSpec is the allowed GPU models joined by '|'; "" means any.
	GPUSpec    string
	QoS, Phase string
	// Times in seconds from the start of the trace; NaN when absent.
	Creation, Deletion, Scheduled float64
	Line                          int
}

// Error is a parse error at a file, line and column.
type Error struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *Error) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: column %s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Limits that keep a malformed file from allocating absurd clusters.
const (
	maxGPUsPerNode = 64
	maxCPUMilli    = 1 << 40
	maxMemoryMiB   = 1 << 40
	// maxSeconds bounds trace times: about 317 years.
	maxSeconds = 1e10
)

// table is a CSV file with a header, read row by row.
type table struct {
	file string
	r    *csv.Reader
	col  map[string]int
	line int
	row  []string
	// interned holds the values of low-variety columns (gpu_spec, qos,
	// pod_phase), so that a row's fields do not pin its whole line.
	interned map[string]string
}

func newTable(file string, r io.Reader, required []string) (*table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	// Every row must have as many fields as the header.
	cr.FieldsPerRecord = 0
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &Error{File: file, Line: 1, Err: errors.New("empty file: want a header line")}
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	t := &table{file: file, r: cr, col: map[string]int{}, line: 1, interned: map[string]string{}}
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := t.col[h]; dup && h != "" {
			return nil, &Error{File: file, Line: 1, Column: h, Err: errors.New("duplicate column")}
		}
		t.col[h] = i
	}
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			return nil, &Error{File: file, Line: 1, Column: c, Err: fmt.Errorf("missing column (header has %s)", strings.Join(header, ","))}
		}
	}
	return t, nil
}

func csvError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: file, Line: pe.Line, Err: pe.Err}
	}
	return &Error{File: file, Err: err}
}

// next reads the next row; it returns io.EOF at the end.
func (t *table) next() error {
	row, err := t.r.Read()
	if err != nil {
		if err == io.EOF {
			return err
		}
		return csvError(t.file, err)
	}
	t.line, _ = t.r.FieldPos(0)
	t.row = row
	return nil
}

func (t *table) errf(column, format string, a ...any) error {
	return &Error{File: t.file, Line: t.line, Column: column, Err: fmt.Errorf(format, a...)}
}

func (t *table) str(column string) string {
	i, ok := t.col[column]
	if !ok || i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

// strCopy is str for a value that is kept: a copy, shared between rows of
// equal value for the first maxInterned distinct values. A field is a
// substring of its whole line, which it would otherwise keep in memory.
func (t *table) strCopy(column string) string {
	s := t.str(column)
	if v, ok := t.interned[s]; ok {
		return v
	}
	s = strings.Clone(s)
	if len(t.interned) < maxInterned {
		t.interned[s] = s
	}
	return s
}

// maxInterned bounds the distinct values strCopy shares.
const maxInterned = 4096

func (t *table) has(column string) bool {
	i, ok := t.col[column]
	return ok && i < len(t.row)
}

func (t *table) int(column string, lo, hi int64) (int64, error) {
	if !t.has(column) {
		return 0, t.errf(column, "missing value (row has %d fields)", len(t.row))
	}
	s := t.str(column)
	if s == "" {
		return 0, t.errf(column, "empty value")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Some exports write integers as floats ("16000.0").
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || math.Abs(f) > 1<<53 {
			return 0, t.errf(column, "%q is not an integer", s)
		}
		v = int64(f)
	}
	if v < lo {
		if lo == 0 {
			return 0, t.errf(column, "negative value %d", v)
		}
		return 0, t.errf(column, "value %d below %d", v, lo)
	}
	if v > hi {
		return 0, t.errf(column, "value %d above %d", v, hi)
	}
	return v, nil
}

// time parses an optional time in seconds; empty, absent or NaN (as
// pandas writes a missing value) gives NaN.
func (t *table) time(column string) (float64, error) {
	s := t.str(column)
	if s == "" || strings.EqualFold(s, "nan") {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, t.errf(column, "%q is not a time in seconds", s)
	}
	if v < 0 {
		return 0, t.errf(column, "negative time %v", v)
	}
	if v > maxSeconds {
		return 0, t.errf(column, "time %v s is beyond %g s (317 years)", v, maxSeconds)
	}
	return v, nil
}

// uniqueName reads a non-empty name that no earlier row used; seen maps
// names to their lines.
func (t *table) uniqueName(column, kind string, seen map[string]int) (string, error) {
	name := t.str(column)
	if name == "" {
		return "", t.errf(column, "empty %s name", kind)
	}
	if prev, dup := seen[name]; dup {
		return "", t.errf(column, "%s %q already defined on line %d", kind, name, prev)
	}
	name = strings.Clone(name) // not the whole line
	seen[name] = t.line
	return name, nil
}

// cpuMemory reads the cpu_milli and memory_mib columns.
func (t *table) cpuMemory() (cpuMilli, memoryMiB int64, err error) {
	if cpuMilli, err = t.int("cpu_milli", 0, maxCPUMilli); err != nil {
		return 0, 0, err
	}
	memoryMiB, err = t.int("memory_mib", 0, maxMemoryMiB)
	return cpuMilli, memoryMiB, err
}

// ReadNodes reads an openb node list (columns sn, cpu_milli, memory_mib,
// gpu, model). file names the input in errors.
func ReadNodes(file string, r io.Reader) ([]NodeSpec, error) {
	t, err := newTable(file, r, []string{"sn", "cpu_milli", "memory_mib", "gpu"})
	if err != nil {
		return nil, err
	}
	var out []NodeSpec
	seen := map[string]int{}
	for {
		if err := t.next(); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		var n NodeSpec
		n.Line = t.line
		if n.Name, err = t.uniqueName("sn", "node", seen); err != nil {
			return nil, err
		}
		if n.CPUMilli, n.MemoryMiB, err = t.cpuMemory(); err != nil {
			return nil, err
		}
		g, err := t.int("gpu", 0, maxGPUsPerNode)
		if err != nil {
			return nil, err
		}
		n.GPUs = int(g)
		n.Model = t.strCopy("model")
		if n.GPUs > 0 && n.Model == "" {
			return nil, t.errf("model", "node with %d GPUs has no GPU model", n.GPUs)
		}
		if n.GPUs == 0 {
			n.Model = ""
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Line: t.line, Err: errors.New("no nodes")}
	}
	return out, nil
}

// ReadPods reads an openb pod list (columns name, cpu_milli, memory_mib,
// num_gpu, gpu_milli, and optionally gpu_spec, qos, pod_phase,
// creation_time, deletion_time, scheduled_time). A pod's num_gpu is 0..64,
// its gpu_milli 0 without GPUs and 1..1000 with them, and below 1000 only
// when num_gpu is 1.
func ReadPods(file string, r io.Reader) ([]PodSpec, error) {
	return readPods(file, r, 0)
}

// readPods is ReadPods with room made for rows pods at the start.
func readPods(file string, r io.Reader, rows int) ([]PodSpec, error) {
	t, err := newTable(file, r, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"})
	if err != nil {
		return nil, err
	}
	out := make([]PodSpec, 0, rows)
	seen := make(map[string]int, rows)
	for {
		if err := t.next(); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		var p PodSpec
		p.Line = t.line
		if p.Name, err = t.uniqueName("name", "pod", seen); err != nil {
			return nil, err
		}
		if p.CPUMilli, p.MemoryMiB, err = t.cpuMemory(); err != nil {
			return nil, err
		}
		ng, err := t.int("num_gpu", 0, maxGPUsPerNode)
		if err != nil {
			return nil, err
		}
		p.NumGPU = int(ng)
		if p.GPUMilli, err = t.int("gpu_milli", 0, 1000); err != nil {
			return nil, err
		}
		switch {
		case p.NumGPU == 0 && p.GPUMilli != 0:
			return nil, t.errf("gpu_milli", "%d milli-GPU with num_gpu 0", p.GPUMilli)
		case p.NumGPU > 0 && p.GPUMilli == 0:
			return nil, t.errf("gpu_milli", "0 milli-GPU with num_gpu %d", p.NumGPU)
		case p.NumGPU > 1 && p.GPUMilli < 1000:
			return nil, t.errf("gpu_milli", "%d milli-GPU with num_gpu %d: only a single GPU can be shared", p.GPUMilli, p.NumGPU)
		}
		p.GPUSpec = t.strCopy("gpu_spec")
		p.QoS = t.strCopy("qos")
		p.Phase = t.strCopy("pod_phase")
		if p.Creation, err = t.time("creation_time"); err != nil {
			return nil, err
		}
		if p.Deletion, err = t.time("deletion_time"); err != nil {
			return nil, err
		}
		if p.Scheduled, err = t.time("scheduled_time"); err != nil {
			return nil, err
		}
		if !math.IsNaN(p.Creation) && !math.IsNaN(p.Deletion) && p.Deletion < p.Creation {
			return nil, t.errf("deletion_time", "deletion %v before creation %v", p.Deletion, p.Creation)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Line: t.line, Err: errors.New("no pods")}
	}
	return out, nil
}

// ReadNodesFile and ReadPodsFile open path and read it.
func ReadNodesFile(path string) ([]NodeSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadNodes(path, f)
}

// ReadPodsFile opens path and reads it with ReadPods. A regular file's
// lines are counted first, so that the pod list and the name index are
// allocated once at their full size rather than grown.
func ReadPodsFile(path string) ([]PodSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows := 0
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		if rows, err = countLines(f); err != nil {
			return nil, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return readPods(path, f, rows)
}

// maxRowsHint bounds the rows countLines lets ReadPodsFile make room for.
const maxRowsHint = 1 << 26

// minRowBytes is the shortest line a pod row can be ("p,0,0,0,0").
const minRowBytes = 9

// countLines returns the number of lines of r at least minRowBytes long, at
// most maxRowsHint: an upper bound on the rows after the header, however
// many blank lines there are.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 1<<20)
	n, run := 0, 0
	for {
		k, err := r.Read(buf)
		for b := buf[:k]; len(b) > 0; {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				run += len(b)
				break
			}
			if run+i >= minRowBytes {
				n++
			}
			run, b = 0, b[i+1:]
		}
		if err == io.EOF {
			if run >= minRowBytes {
				n++
			}
			return min(n, maxRowsHint), nil
		}
		if err != nil {
			return 0, err
		}
	}
}
