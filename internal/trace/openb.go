// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package trace reads the inputs a simulation is driven by: the node and
// pod lists of the Alibaba openb trace (github.com/alibaba/clusterdata,
// cluster-trace-gpu-v2023; Weng et al., USENIX ATC 2023), the Alibaba 2025
// trace, cluster YAML and node specs ("A100-80GB x 16"), NVIDIA mig-parted
// configs, sizing targets (--size), and the built-in workload; the
// Kubernetes quantity grammar ("500m", "40Gi") the snapshot reader
// shares; and the paper's published results for the openb pod lists
// (PublishedResults), which the simulator's tests and HTML report compare
// against. A live cluster's `kubectl get -o json` is read by
// internal/snapshot.
//
// Readers validate every row: an error names the file, the line and the
// column, and no input makes them panic. What they accept but a user
// should know (GPU-less nodes, unknown qos or pod_phase values) is
// returned by Warnings.
package trace

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"slices"

	"github.com/gpuplane/gpuplane/internal/cluster"
	"github.com/gpuplane/gpuplane/internal/gpu"
	"github.com/gpuplane/gpuplane/internal/kubename"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gpuplane/gpuplane/internal/yamlx"
)

// NodeSpec is one row of an openb node list.
type NodeSpec struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	GPUs                int
	// Model is the GPU model ("" for a CPU-only node).
	Model string
	// Vendor is the maker of its GPUs (a node list's vendor; the model's,
	// gpu.VendorOf, when not given) and Partition their AMD partition
	// mode, GPUs then counting partitions (gpu.Partitions).
	Vendor    gpu.Vendor
	Partition gpu.Partition
	// Shared reports that the node serves its GPUs as time-sliced
	// replicas under nvidia.com/gpu.shared (a snapshot's; cluster.Node.Shared).
	Shared bool
	// MIGAsGPU reports that the node serves its MIG instances as
	// nvidia.com/gpu, NVIDIA's single MIG strategy (a snapshot's;
	// cluster.Node.MIGAsGPU).
	MIGAsGPU bool
	// ReplicaMilli is the milli-GPU of one nvidia.com/gpu device when it
	// is less than a GPU: a time-slicing or MPS replica under NVIDIA's
	// default naming, or a single-strategy MIG instance (a snapshot's;
	// cluster.Node.ReplicaMilli); 0: a device is a GPU.
	ReplicaMilli int64
	// MIGServed, when not 0, are the MIG devices the node's device plugin
	// serves as nvidia.com/mig-<profile> (a snapshot's mixed-strategy
	// node): bit c for a profile of c compute slices (1..7). A pod asking
	// for a MIG device of other slices fits none of its GPUs
	// (cluster.Node.MIGServed). 0: any.
	MIGServed uint8
	// MIG is the MIG layout of each GPU from a cluster YAML's mig field
	// (NodeGroup.MIG); nil: whole GPUs. gpuplane simulate --sharing mig
	// uses it; MIGLine is that field's line in the file.
	MIG     []string
	MIGLine int
	// MIGGPUs is how many of the node's GPUs carry the MIG layout (a
	// snapshot node with some GPUs whole, the rest MIG-enabled; gpuplane
	// simulate takes the first that no running pod of whole GPUs holds);
	// 0: all of them.
	MIGGPUs int
	// NoDynamicMIG marks a DRA node of a snapshot whose GPUs publish no
	// MIG placements (MIG mode off): MIG on demand (simulate --gpu-api
	// dra --sharing mig) leaves its GPUs whole, as the cluster serves
	// them.
	NoDynamicMIG bool
	// MIGModeGPUs marks, on a DRA node of a snapshot, the GPUs in MIG mode
	// (bit g: GPU g publishes MIG placements with counters): MIG on demand
	// makes exactly those GPUs of MIG on demand. 0: the simulator chooses
	// (as fixed layouts would MIG-enable).
	MIGModeGPUs uint64
	// Serving is how a snapshot's node serves its GPUs (cluster.Node.Serving:
	// device plugin, DRA ResourceSlices, or both); the zero value, a
	// device plugin's, for every other node.
	Serving cluster.GPUServing
	// IgnoredModel is the model column of a node with 0 GPUs, which is
	// ignored (Warnings names it).
	IgnoredModel string
	Line         int
	// Labels, Taints and Unschedulable (spec.unschedulable) are a
	// snapshot's node's, for Kubernetes' own filters (cluster.NodeFilter).
	Labels        map[string]string
	Taints        []cluster.Taint
	Unschedulable bool
}

// PodSpec is one row of an openb pod list.
type PodSpec struct {
	Name string
	// CPUMilli in millicores, MemoryMiB in MiB.
	CPUMilli, MemoryMiB int64
	// GPUSpec is the allowed GPU models joined by '|'; "" means any.
	GPUSpec    string
	QoS, Phase string
	// Times in seconds from the start of the trace; NaN when absent.
	Creation, Deletion, Scheduled float64
	// NumGPU GPUs (0..64) of GPUMilli milli-GPU (0..1000) each. The
	// narrow types keep a PodSpec at 128 bytes: a trace of 14 million pods
	// is read in under 2 GB.
	NumGPU int8
	// Resource is the extended resource a snapshot's pod asks for
	// (cluster.ResourceKind), marked cluster.ResourceClaimed when it asks
	// by DRA ResourceClaim (cluster.Pod.Claim; Pod splits them); a
	// trace's pods are cluster.ResourceAny.
	Resource cluster.ResourceKind
	GPUMilli int16
	// Line is the row's line in the file (ReadPods refuses a row beyond
	// line 2,147,483,647).
	Line int32
	// Filter is what a snapshot's pod asks of its node beyond resources
	// (nil: nothing; a trace's pods).
	Filter *cluster.NodeFilter
	// Vendors are the vendors whose GPUs the pod accepts (the pod CSV's
	// vendors column, podVendors; cluster.Pod.Vendors): 0, any.
	Vendors cluster.VendorSet
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
	maxGPUsPerNode = cluster.MaxGPUsPerNode
	maxCPUMilli    = 1 << 40
	maxMemoryMiB   = 1 << 40
	// maxSeconds bounds trace times: about 317 years.
	maxSeconds = 1e10
	// MaxNameLen bounds pod and node names as Kubernetes bounds an object
	// name (a DNS subdomain, RFC 1123: 253 characters).
	MaxNameLen = kubename.MaxSubdomain
	// MaxModelLen bounds a GPU model name as Kubernetes bounds a label
	// value (63 characters): the model goes into nvidia.com/gpu.product.
	MaxModelLen = kubename.MaxLabelValue
	// maxNumberLen bounds a number's text: 19 digits hold any int64, and
	// a time's float text ("1.2345678901234567e+09") needs about 24.
	maxNumberLen = 32
	// maxGPUSpecLen bounds gpu_spec: gpu.MaxModels (64) models of 63 characters joined
	// by '|'.
	maxGPUSpecLen = gpu.MaxModels * (MaxModelLen + 1)
	// maxTextLen bounds qos and pod_phase.
	maxTextLen = 63
	// maxLineLen bounds a line of the file, far above what the bounded
	// fields need, so that a huge value is refused before it is read whole.
	maxLineLen = 1 << 20
)

// lineLimit passes a reader through and fails on a line longer than
// maxLineLen bytes.
type lineLimit struct {
	r    io.Reader
	line int // current line, from 1
	len  int // bytes of the current line so far
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	// Lines between the first and the last newline of b are shorter than
	// b; b is read in chunks far smaller than maxLineLen (encoding/csv
	// reads 4 KiB at a time), else they are checked one by one.
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.len += len(b)
			break
		}
		if l.len+i > maxLineLen {
			l.len += i
			break
		}
		last := bytes.LastIndexByte(b, '\n')
		if len(b) > maxLineLen {
			last = i
		} else {
			l.line += bytes.Count(b[i+1:last+1], []byte{'\n'})
		}
		l.line++
		l.len = 0
		b = b[last+1:]
	}
	if l.len > maxLineLen {
		return 0, longLine(l.line)
	}
	return n, err
}

// longLine is the error for line, longer than maxLineLen bytes.
func longLine(line int) error {
	return &Error{Line: line, Err: fmt.Errorf("line longer than %d bytes", maxLineLen)}
}

// plainLines reads the records of a CSV input that holds no '"' byte: its
// lines split at commas, which is what encoding/csv returns for such input
// (a "\r\n" ending read as "\n", a '\r' before the end of the input
// dropped, blank lines skipped), without copying each record.
type plainLines struct {
	r          io.Reader
	buf        []byte
	start, end int // the unread bytes of buf
	eof        bool
	line       int // lines read
	row        []string
}

// read returns the next record and its line; the fields point into the
// reader's buffer and are valid until the next call. It returns io.EOF at
// the end.
func (p *plainLines) read() ([]string, int, error) {
	if p.buf == nil {
		p.buf = make([]byte, 64<<10)
	}
	for {
		raw, ok := p.buf[p.start:p.end], false
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			raw, ok = raw[:i], true
			p.start += i + 1
		} else if len(raw) > maxLineLen {
			return nil, 0, longLine(p.line + 1)
		} else if p.eof {
			if len(raw) == 0 {
				return nil, 0, io.EOF
			}
			ok, p.start = true, p.end
		}
		if ok {
			p.line++
			if len(raw) > maxLineLen {
				return nil, 0, longLine(p.line)
			}
			if n := len(raw); n > 0 && raw[n-1] == '\r' {
				raw = raw[:n-1]
			}
			if len(raw) == 0 {
				continue // blank line
			}
			p.row = p.row[:0]
			for {
				i := bytes.IndexByte(raw, ',')
				if i < 0 {
					p.row = append(p.row, byteString(raw))
					return p.row, p.line, nil
				}
				p.row = append(p.row, byteString(raw[:i]))
				raw = raw[i+1:]
			}
		}
		p.end = copy(p.buf, p.buf[p.start:p.end])
		p.start = 0
		if p.end == len(p.buf) {
			// A line longer than the buffer, at most maxLineLen bytes.
			p.buf = append(p.buf, make([]byte, len(p.buf))...)
		}
		n, err := io.ReadAtLeast(p.r, p.buf[p.end:], 1)
		p.end += n
		if err == io.EOF {
			p.eof = true
		} else if err != nil {
			return nil, 0, err
		}
	}
}

// byteString returns b as a string without copying it.
func byteString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// table is a CSV file with a header, read row by row.
type table struct {
	file string
	// r reads the rows; plain instead when the input holds no '"'.
	r      *csv.Reader
	plain  *plainLines
	col    map[string]int
	header []string
	line   int
	row    []string
	// src is the input when it can be read again, to name the column of
	// a CSV syntax error; nil otherwise.
	src io.ReadSeeker
	// interned holds the values of low-variety columns (gpu_spec, qos,
	// pod_phase), so that a row's fields do not pin its whole line.
	interned map[string]string
}

// newTable reads the header of r. plain says that r holds no '"' byte, so
// that its rows can be read as lines split at commas.
func newTable(file string, r io.Reader, required []string, plain bool) (*table, error) {
	t := &table{file: file, col: map[string]int{}, line: 1, interned: map[string]string{}}
	t.src, _ = r.(io.ReadSeeker)
	var header []string
	var err error
	if plain {
		t.plain = &plainLines{r: r}
		header, _, err = t.plain.read()
	} else {
		t.r = csv.NewReader(&lineLimit{r: r, line: 1})
		t.r.ReuseRecord = true
		// Every row must have as many fields as the header.
		t.r.FieldsPerRecord = 0
		header, err = t.r.Read()
	}
	if err == io.EOF {
		return nil, &Error{File: file, Line: 1, Err: errors.New("empty file: want a header line")}
	}
	if err != nil {
		return nil, t.csvError(err, 0)
	}
	t.header = make([]string, len(header))
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if len(h) > maxTextLen {
			return nil, &Error{File: file, Line: 1, Err: fmt.Errorf("column %d: name %s longer than %d characters", i+1, Quote(h), maxTextLen)}
		}
		if _, dup := t.col[h]; dup && h != "" {
			return nil, &Error{File: file, Line: 1, Column: h, Err: errors.New("duplicate column")}
		}
		h = strings.Clone(h) // not the reader's buffer
		t.col[h] = i
		t.header[i] = h
	}
	for _, c := range required {
		if _, ok := t.col[c]; !ok {
			return nil, &Error{File: file, Line: 1, Column: c, Err: fmt.Errorf("missing column (header has %s)", Quote(strings.Join(t.header, ",")))}
		}
	}
	return t, nil
}

// csvError turns an error of the CSV reader into an *Error; fields is the
// length of the row read with it (csv.ErrFieldCount), else 0. A syntax
// error names its column when the input can be read again to find it.
func (t *table) csvError(err error, fields int) error {
	var pe *csv.ParseError
	var le *Error
	switch {
	case errors.As(err, &le):
		e := &Error{File: t.file, Line: le.Line, Err: le.Err}
		t.nameColumn(e, le.Line, maxLineLen+1)
		return e
	case !errors.As(err, &pe):
		return &Error{File: t.file, Line: t.line, Err: err}
	}
	e := &Error{File: t.file, Line: pe.Line, Err: pe.Err}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		e.Err = fmt.Errorf("%w: the row has %d, the header %d", pe.Err, fields, len(t.header))
		return e
	}
	t.nameColumn(e, pe.StartLine, pe.Column)
	return e
}

// nameColumn sets e.Column to the column that holds byte col (1-based) of
// line e.Line, in the record starting on line start, when it can be found.
func (t *table) nameColumn(e *Error, start, col int) {
	if i, ok := t.fieldAt(start, e.Line, col); ok {
		if i < len(t.header) && t.header[i] != "" {
			e.Column = t.header[i]
		} else {
			e.Column = fmt.Sprint(i + 1)
		}
	}
}

// fieldAt reads the input again and returns the index of the field of the
// record starting on line start that holds byte col (1-based) of line
// line: the commas before it outside quotes. ok is false when the input
// cannot be read again.
func (t *table) fieldAt(start, line, col int) (field int, ok bool) {
	if t.src == nil {
		return 0, false
	}
	if _, err := t.src.Seek(0, io.SeekStart); err != nil {
		return 0, false
	}
	br := bufio.NewReader(t.src)
	n, c := 1, 0 // line and 1-based byte of the next byte
	quoted := false
	for {
		b, err := br.ReadByte()
		if err != nil {
			return field, n == line
		}
		c++
		if n == line && c >= col {
			return field, true
		}
		switch {
		case b == '\n':
			n, c = n+1, 0
			if n > line {
				return field, true
			}
		case n < start:
		case b == '"':
			quoted = !quoted
		case b == ',' && !quoted:
			field++
		}
	}
}

// next reads the next row; it returns io.EOF at the end.
func (t *table) next() error {
	if t.plain != nil {
		row, line, err := t.plain.read()
		if err == io.EOF {
			return err
		}
		if err == nil && len(row) != len(t.header) {
			// As encoding/csv reports a row of another length.
			err = &csv.ParseError{StartLine: line, Line: line, Column: 1, Err: csv.ErrFieldCount}
		}
		if err != nil {
			return t.csvError(err, len(row))
		}
		t.line, t.row = line, row
		return nil
	}
	row, err := t.r.Read()
	if err != nil {
		if err == io.EOF {
			return err
		}
		return t.csvError(err, len(row))
	}
	t.line, _ = t.r.FieldPos(0)
	t.row = row
	return nil
}

func (t *table) errf(column, format string, a ...any) error {
	return &Error{File: t.file, Line: t.line, Column: column, Err: fmt.Errorf(format, a...)}
}

// column is a column of the header: its name, and its index, -1 when the
// header lacks it.
type column struct {
	name string
	i    int
}

// column looks name up in the header, once, so that rows are read without
// looking up names.
func (t *table) column(name string) column {
	i, ok := t.col[name]
	if !ok {
		i = -1
	}
	return column{name, i}
}

func (t *table) str(c column) string {
	if c.i < 0 || c.i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[c.i])
}

// strCopy is str for a value that is kept: a copy, shared between rows of
// equal value for the first maxInterned distinct values. A field is a
// substring of its whole line, which it would otherwise keep in memory.
func (t *table) strCopy(c column) string {
	s := t.str(c)
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

func (t *table) has(c column) bool {
	return c.i >= 0 && c.i < len(t.row)
}

func (t *table) int(c column, lo, hi int64) (int64, error) {
	if !t.has(c) {
		return 0, t.errf(c.name, "missing value (row has %d fields)", len(t.row))
	}
	s := t.str(c)
	if s == "" {
		return 0, t.errf(c.name, "empty value")
	}
	if len(s) > maxNumberLen {
		return 0, t.errf(c.name, "%s is not an integer: longer than %d characters", Quote(s), maxNumberLen)
	}
	// Some exports write integers as floats ("16000.0"): a fraction of
	// zeros is accepted; scientific notation ("1e3") and hex are not.
	digits := s
	if i := strings.IndexByte(s, '.'); i >= 0 && strings.Trim(s[i+1:], "0") == "" {
		digits = s[:i]
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(s, 64); ferr == nil && strings.ContainsAny(s, "eE") {
			return 0, t.errf(c.name, "%s is not an integer: write it without an exponent", Quote(s))
		}
		return 0, t.errf(c.name, "%s is not an integer", Quote(s))
	}
	if v < lo {
		if lo == 0 {
			return 0, t.errf(c.name, "negative value %d", v)
		}
		return 0, t.errf(c.name, "value %d below %d", v, lo)
	}
	if v > hi {
		return 0, t.errf(c.name, "value %d above %d", v, hi)
	}
	return v, nil
}

// time parses an optional time in seconds; empty, absent or NaN (as
// pandas writes a missing value) gives NaN.
func (t *table) time(c column) (float64, error) {
	s := t.str(c)
	if s == "" || strings.EqualFold(s, "nan") {
		return math.NaN(), nil
	}
	if len(s) > maxNumberLen {
		return 0, t.errf(c.name, "%s is not a time in seconds: longer than %d characters", Quote(s), maxNumberLen)
	}
	v, ok := wholeSeconds(s)
	if !ok {
		var err error
		v, err = strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || strings.HasPrefix(strings.TrimLeft(s, "+-"), "0x") {
			return 0, t.errf(c.name, "%s is not a time in seconds", Quote(s))
		}
	}
	if v < 0 {
		return 0, t.errf(c.name, "negative time %v", v)
	}
	if v > maxSeconds {
		return 0, t.errf(c.name, "time %v s is beyond %g s (317 years)", v, maxSeconds)
	}
	return v, nil
}

// wholeSeconds reads a time of up to 15 digits and nothing else, as the
// openb traces write them, faster than strconv.ParseFloat and with the
// same value: such a number is below 2^53, so exact in a float64.
func wholeSeconds(s string) (float64, bool) {
	if len(s) == 0 || len(s) > 15 {
		return 0, false
	}
	n := int64(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return float64(n), true
}

// name reads a non-empty name of at most MaxNameLen bytes; the result
// points into the reader's buffer (see arena).
func (t *table) name(c column, kind string) (string, error) {
	name := t.str(c)
	if name == "" {
		return "", t.errf(c.name, "empty %s name", kind)
	}
	if len(name) > MaxNameLen {
		return "", t.errf(c.name, "%s name %s longer than %d characters (Kubernetes' limit for an object name)", kind, Quote(name), MaxNameLen)
	}
	return name, nil
}

// text reads an optional text column of at most max characters.
func (t *table) text(c column, max int) (string, error) {
	s := t.str(c)
	if len(s) > max {
		return "", t.errf(c.name, "%s longer than %d characters", Quote(s), max)
	}
	return t.strCopy(c), nil
}

// cpuMemory reads the cpu_milli and memory_mib columns.
func (t *table) cpuMemory(cpu, mem column) (cpuMilli, memoryMiB int64, err error) {
	if cpuMilli, err = t.int(cpu, 0, maxCPUMilli); err != nil {
		return 0, 0, err
	}
	memoryMiB, err = t.int(mem, 0, maxMemoryMiB)
	return cpuMilli, memoryMiB, err
}

// nameSet finds the first name that repeats an earlier one, after all
// names are read: it keeps a 64-bit hash of each name, sorted at the end,
// which holds no pointers for the garbage collector to follow and takes
// far less memory and time than a map of names. Only names whose hashes
// repeat are compared.
type nameSet struct {
	hash   func(string) uint64
	hashes []uint64
}

func newNameSet(rows int) *nameSet {
	seed := maphash.MakeSeed()
	return &nameSet{hash: func(s string) uint64 { return maphash.String(seed, s) }, hashes: make([]uint64, 0, rows)}
}

func (s *nameSet) add(name string) { s.hashes = append(s.hashes, s.hash(name)) }

// duplicate returns the error for the first name, in the order added,
// that an earlier one repeats, or nil. row returns the i-th name added and
// its line. It sorts the hashes: call it once, at the end.
func (s *nameSet) duplicate(t *table, column, kind string, row func(i int) (string, int)) error {
	n := len(s.hashes)
	slices.Sort(s.hashes)
	repeated := map[uint64]bool{}
	for i := 1; i < n; i++ {
		if s.hashes[i] == s.hashes[i-1] {
			repeated[s.hashes[i]] = true
		}
	}
	if len(repeated) == 0 {
		return nil
	}
	seen := map[string]int{}
	for i := range n {
		name, line := row(i)
		if !repeated[s.hash(name)] {
			continue
		}
		if prev, ok := seen[name]; ok {
			return &Error{File: t.file, Line: line, Column: column, Err: fmt.Errorf("%s %s already defined on line %d", kind, Quote(name), prev)}
		}
		seen[name] = line
	}
	return nil
}

// arena copies names into large shared blocks rather than one allocation
// each; a name is a string into a block.
type arena struct {
	buf []byte
}

func (a *arena) clone(s string) string {
	if len(s) == 0 {
		return ""
	}
	if len(s) > cap(a.buf)-len(a.buf) {
		a.buf = make([]byte, 0, max(min(2*cap(a.buf), 1<<20), 4<<10, len(s)))
	}
	n := len(a.buf)
	a.buf = append(a.buf, s...)
	return unsafe.String(&a.buf[n], len(s))
}

// ReadNodes reads an openb node list (columns sn, cpu_milli, memory_mib,
// gpu, model). file names the input in errors.
func ReadNodes(file string, r io.Reader) ([]NodeSpec, error) {
	t, err := newTable(file, r, []string{"sn", "cpu_milli", "memory_mib", "gpu"}, false)
	if err != nil {
		return nil, err
	}
	var n NodeSpec // the row being read
	names := newNameSet(0)
	out, err := nodeRows(t, names, &n)
	// A repeated name is the first error of its row, and is reported
	// before the errors of later rows.
	if derr := names.duplicate(t, "sn", "node", func(i int) (string, int) {
		if i < len(out) {
			return out[i].Name, out[i].Line
		}
		return n.Name, n.Line
	}); derr != nil {
		return nil, derr
	}
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &Error{File: file, Line: t.line, Err: errors.New("no nodes")}
	}
	return out, nil
}

// nodeRows reads the rows of ReadNodes, adding their names to names, into
// n and then the result; on an error it returns the rows before.
func nodeRows(t *table, names *nameSet, n *NodeSpec) ([]NodeSpec, error) {
	var out []NodeSpec
	var a arena
	sn, cpu, mem, gpu, model := t.column("sn"), t.column("cpu_milli"), t.column("memory_mib"), t.column("gpu"), t.column("model")
	vendor, partition := t.column("vendor"), t.column("partition")
	for {
		err := t.next()
		if err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		*n = NodeSpec{Line: t.line}
		name, err := t.name(sn, "node")
		if err != nil {
			return out, err
		}
		n.Name = a.clone(name)
		names.add(n.Name)
		if n.CPUMilli, n.MemoryMiB, err = t.cpuMemory(cpu, mem); err != nil {
			return out, err
		}
		g, err := t.int(gpu, 0, maxGPUsPerNode)
		if err != nil {
			return out, err
		}
		n.GPUs = int(g)
		if n.Model, err = t.text(model, MaxModelLen); err != nil {
			return out, err
		}
		if n.GPUs > 0 && n.Model == "" {
			return out, t.errf("model", "node with %d GPUs has no GPU model", n.GPUs)
		}
		if n.GPUs == 0 {
			n.Model, n.IgnoredModel = "", n.Model
		}
		if err := nodeVendor(t, vendor, partition, n); err != nil {
			return out, err
		}
		out = append(out, *n)
	}
}

// nodeVendor reads a node row's optional vendor and partition columns
// into n (deviceGPUs: its gpu column then counts devices, each
// Partitions' GPUs).
func nodeVendor(t *table, vendor, partition column, n *NodeSpec) error {
	v, err := vendorOf(n.Model, t.str(vendor))
	if err != nil {
		return t.errf("vendor", "%v", err)
	}
	p, err := gpu.ParsePartition(t.str(partition))
	if err == nil {
		n.GPUs, err = partitionGPUs(n.Model, p, n.GPUs)
	}
	if err != nil {
		return t.errf("partition", "%v", err)
	}
	n.Vendor, n.Partition = v, p
	return nil
}

// ReadPods reads an openb pod list (columns name, cpu_milli, memory_mib,
// num_gpu, gpu_milli, and optionally gpu_spec, qos, pod_phase,
// creation_time, deletion_time, scheduled_time, resource: the
// accelerator resource the pod asks for, podResource; vendors: the
// vendors whose GPUs it accepts, podVendors). A pod's num_gpu is 0..64,
// its gpu_milli 0 without GPUs and 1..1000 with them, and below 1000 only
// when num_gpu is 1.
//
// When r is a regular *os.File its lines are counted first, from its
// current offset, so that the pod list and the name index are allocated
// once at their full size, and a file without a '"' byte is read as plain
// comma-separated lines, faster than with encoding/csv and with the same
// result.
func ReadPods(file string, r io.Reader) ([]PodSpec, error) {
	rows, plain := 0, false
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			off, err := f.Seek(0, io.SeekCurrent)
			if err != nil {
				return nil, err
			}
			quoted := false
			if rows, quoted, err = countLines(f); err != nil {
				return nil, err
			}
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				return nil, err
			}
			plain = !quoted
		}
	}
	return readPods(file, r, rows, plain)
}

// readPods is ReadPods with room made for rows pods at the start; plain
// says that r holds no '"' byte.
func readPods(file string, r io.Reader, rows int, plain bool) ([]PodSpec, error) {
	t, err := newTable(file, r, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"}, plain)
	if err != nil {
		return nil, err
	}
	var p PodSpec // the row being read
	names := newNameSet(rows)
	out, err := podRows(t, rows, names, &p)
	// A repeated name is the first error of its row, and is reported
	// before the errors of later rows.
	if derr := names.duplicate(t, "name", "pod", func(i int) (string, int) {
		if i < len(out) {
			return out[i].Name, int(out[i].Line)
		}
		return p.Name, int(p.Line)
	}); derr != nil {
		return out, derr
	}
	if err != nil {
		return out, err
	}
	if len(out) == 0 {
		return out, &Error{File: file, Line: t.line, Err: errors.New("no pods")}
	}
	return out, nil
}

// podRows reads the rows of readPods, adding their names to names, into p
// and then the result; on an error it returns the rows before.
func podRows(t *table, rows int, names *nameSet, p *PodSpec) ([]PodSpec, error) {
	out := make([]PodSpec, 0, rows)
	var a arena
	nameCol, cpu, mem := t.column("name"), t.column("cpu_milli"), t.column("memory_mib")
	numGPU, gpuMilli, gpuSpec, res := t.column("num_gpu"), t.column("gpu_milli"), t.column("gpu_spec"), t.column("resource")
	qos, phase, vendors := t.column("qos"), t.column("pod_phase"), t.column("vendors")
	creation, deletion, scheduled := t.column("creation_time"), t.column("deletion_time"), t.column("scheduled_time")
	for {
		err := t.next()
		if err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		if t.line > math.MaxInt32 {
			return out, t.errf("", "line beyond %d", math.MaxInt32)
		}
		*p = PodSpec{Line: int32(t.line)}
		name, err := t.name(nameCol, "pod")
		if err != nil {
			return out, err
		}
		p.Name = a.clone(name)
		names.add(p.Name)
		if p.CPUMilli, p.MemoryMiB, err = t.cpuMemory(cpu, mem); err != nil {
			return out, err
		}
		ng, err := t.int(numGPU, 0, maxGPUsPerNode)
		if err != nil {
			return out, err
		}
		gm, err := t.int(gpuMilli, 0, cluster.MilliGPU)
		if err != nil {
			return out, err
		}
		p.NumGPU, p.GPUMilli = int8(ng), int16(gm)
		switch {
		case p.NumGPU == 0 && p.GPUMilli != 0:
			return out, t.errf("gpu_milli", "%d milli-GPU with num_gpu 0", p.GPUMilli)
		case p.NumGPU > 0 && p.GPUMilli == 0:
			return out, t.errf("gpu_milli", "0 milli-GPU with num_gpu %d", p.NumGPU)
		case p.NumGPU > 1 && p.GPUMilli < cluster.MilliGPU:
			return out, t.errf("gpu_milli", "%d milli-GPU with num_gpu %d: only a single GPU can be shared", p.GPUMilli, p.NumGPU)
		}
		if p.Resource, err = podResource(t.str(res), int(p.NumGPU), int(p.GPUMilli)); err != nil {
			return out, t.errf("resource", "%v", err)
		}
		if p.Vendors, err = podVendors(t.str(vendors), p.Resource); err != nil {
			return out, t.errf("vendors", "%v", err)
		}
		if p.GPUSpec, err = t.gpuSpec(gpuSpec); err != nil {
			return out, err
		}
		if p.QoS, err = t.text(qos, maxTextLen); err != nil {
			return out, err
		}
		if p.Phase, err = t.text(phase, maxTextLen); err != nil {
			return out, err
		}
		if p.Creation, err = t.time(creation); err != nil {
			return out, err
		}
		if p.Deletion, err = t.time(deletion); err != nil {
			return out, err
		}
		if p.Scheduled, err = t.time(scheduled); err != nil {
			return out, err
		}
		if !math.IsNaN(p.Creation) && !math.IsNaN(p.Deletion) && p.Deletion < p.Creation {
			return out, t.errf("deletion_time", "deletion %v before creation %v", p.Deletion, p.Creation)
		}
		out = append(out, *p)
	}
}

// gpuSpec reads a pod row's gpu_spec column: models joined by '|', each
// at most MaxModelLen characters.
func (t *table) gpuSpec(c column) (string, error) {
	spec, err := t.text(c, maxGPUSpecLen)
	if err != nil {
		return "", err
	}
	for rest := spec; len(rest) > MaxModelLen; {
		m, more, _ := strings.Cut(rest, "|")
		if len(strings.TrimSpace(m)) > MaxModelLen {
			return "", t.errf("gpu_spec", "GPU model %s longer than %d characters", Quote(m), MaxModelLen)
		}
		rest = more
	}
	return spec, nil
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

// ReadPodsFile opens path and reads it with ReadPods.
func ReadPodsFile(path string) ([]PodSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPods(path, f)
}

// maxRowsHint bounds the rows countLines lets ReadPodsFile make room for.
const maxRowsHint = 1 << 26

// minRowBytes is the shortest line a pod row can be ("p,0,0,0,0").
const minRowBytes = 9

// countLines returns the number of lines of r at least minRowBytes long, at
// most maxRowsHint: an upper bound on the rows after the header, however
// many blank lines there are; and whether r holds a '"' byte.
func countLines(r io.Reader) (rows int, quoted bool, err error) {
	buf := make([]byte, 1<<20)
	n, run := 0, 0
	for {
		k, err := r.Read(buf)
		quoted = quoted || bytes.IndexByte(buf[:k], '"') >= 0
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
			return min(n, maxRowsHint), quoted, nil
		}
		if err != nil {
			return 0, false, err
		}
	}
}

// Quote returns s quoted for an error or warning, cut to its first 40
// characters (then "…" and its length) so that a huge value gives a short
// message: yamlx.Quote, one rule for every input format.
func Quote(s string) string { return yamlx.Quote(s) }
