// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

func TestReadPodsValid(t *testing.T) {
	in := podHeader +
		"p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n" +
		"p1,6000,12288,1,460,V100M16|V100M32,LS,Pending,427061,12902960,\n" +
		"p2,4000,8192,0,0,,BE,Succeeded,5,10,6\n"
	pods, err := ReadPods("pods.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 3 {
		t.Fatalf("%d pods", len(pods))
	}
	p := pods[1]
	if p.Name != "p1" || p.CPUMilli != 6000 || p.MemoryMiB != 12288 || p.NumGPU != 1 || p.GPUMilli != 460 ||
		p.GPUSpec != "V100M16|V100M32" || p.Creation != 427061 || p.Deletion != 12902960 || !math.IsNaN(p.Scheduled) || p.Line != 3 {
		t.Fatalf("pod 1 = %+v", p)
	}
}

func TestReadErrorsNameFileLineColumn(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "pods.csv:1: empty file"},
		{"missing column", "name,cpu_milli,memory_mib,num_gpu\np,1,1,0\n", "pods.csv:1: column gpu_milli: missing column"},
		{"negative request", podHeader + "p,-5,1,0,0,,,,0,1,0\n", "pods.csv:2: column cpu_milli: negative value -5"},
		{"not a number", podHeader + "p,1,x,0,0,,,,0,1,0\n", `pods.csv:2: column memory_mib: "x" is not an integer`},
		{"share of many GPUs", podHeader + "p,1,1,2,500,,,,0,1,0\n", "pods.csv:2: column gpu_milli: 500 milli-GPU with num_gpu 2"},
		{"too many GPUs", podHeader + "p,1,1,99,1000,,,,0,1,0\n", "pods.csv:2: column num_gpu: value 99 above 64"},
		{"deletion before creation", podHeader + "p,1,1,0,0,,,,10,5,\n", "pods.csv:2: column deletion_time: deletion 5 before creation 10"},
		{"bad time", podHeader + "p,1,1,0,0,,,,abc,5,\n", `pods.csv:2: column creation_time: "abc" is not a time in seconds`},
		{"short row", podHeader + "p,1,1\n", "pods.csv:2: wrong number of fields"},
		{"long row", podHeader + "p,1,1,0,0,,,,0,1,0,extra\n", "pods.csv:2: wrong number of fields"},
		{"duplicate pod", podHeader + "p,1,1,0,0,,,,0,1,0\np,1,1,0,0,,,,0,1,0\n", `pods.csv:3: column name: pod "p" already defined on line 2`},
		{"time too large", podHeader + "p,1,1,0,0,,,,0,1e300,0\n", "pods.csv:2: column deletion_time: time 1e+300 s is beyond 1e+10 s"},
		{"header only", podHeader, "pods.csv:1: no pods"},
		{"bad quote", podHeader + "p,\"1,1,0,0,,,,0,1,0\n", "pods.csv:2:"},
	}
	for _, tc := range cases {
		_, err := ReadPods("pods.csv", strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix %q", tc.name, err, tc.want)
		}
		var te *Error
		if err != nil && !errors.As(err, &te) {
			t.Errorf("%s: error %T is not a *trace.Error", tc.name, err)
		}
	}
	nodeCases := []struct{ name, in, want string }{
		{"gpus without model", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,2,\n", "nodes.csv:2: column model: node with 2 GPUs has no GPU model"},
		{"duplicate", "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,0,\nn,1,1,0,\n", `nodes.csv:3: column sn: node "n" already defined on line 2`},
		{"negative", "sn,cpu_milli,memory_mib,gpu,model\nn,1,-1,0,\n", "nodes.csv:2: column memory_mib: negative value -1"},
	}
	for _, tc := range nodeCases {
		_, err := ReadNodes("nodes.csv", strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix %q", tc.name, err, tc.want)
		}
	}
}

// TestReadOpenbTrace reads the real trace files and checks the counts the
// trace's README gives.
func TestReadOpenbTrace(t *testing.T) {
	nodes, err := ReadNodesFile(testenv.Openb(t, "openb_node_list_gpu_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	gpus := 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	if len(nodes) != 1213 || gpus != 6212 {
		t.Fatalf("%d nodes, %d GPUs; the README says 1,213 and 6,212", len(nodes), gpus)
	}
	all, err := ReadNodesFile(testenv.Openb(t, "openb_node_list_all_node.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1523 {
		t.Fatalf("%d nodes in the all-node list, want 1,523", len(all))
	}
	pods, err := ReadPodsFile(testenv.Openb(t, "openb_pod_list_default.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 8152 {
		t.Fatalf("%d pods, want 8,152", len(pods))
	}
}

func TestBuiltin(t *testing.T) {
	nodes := BuiltinNodes(1)
	gpus := 0
	for _, n := range nodes {
		gpus += n.GPUs
	}
	// The openb GPU node list: 1,213 nodes, 6,212 GPUs.
	if len(nodes) != 1213 || gpus != 6212 {
		t.Fatalf("BuiltinNodes(1): %d nodes, %d GPUs, want 1213 and 6212", len(nodes), gpus)
	}
	a, b := BuiltinPods(500, 1, 60, 3600), BuiltinPods(500, 1, 60, 3600)
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("BuiltinPods is not deterministic for a seed")
		}
	}
}

// TestCountLines: lines of at least minRowBytes (9) bytes, the last one
// with or without a line feed; blank and short lines do not count; and
// whether a '"' occurs.
func TestCountLines(t *testing.T) {
	for in, want := range map[string]struct {
		rows   int
		quoted bool
	}{
		"":                               {0, false},
		"\n\n\n":                         {0, false},
		"p,0,0,0,0":                      {1, false},
		"p,0,0,0,0\n":                    {1, false},
		"p,0,0,0,\n":                     {0, false},
		"name,cpu_milli\n\np,0,0,0,0\nx": {2, false},
		"\"p\",0,0,0,0\n":                {1, true},
		"p,0,0,0,0\nq,1,1,1,\"":          {2, true},
	} {
		rows, quoted, err := countLines(strings.NewReader(in))
		if err != nil || rows != want.rows || quoted != want.quoted {
			t.Errorf("countLines(%q) = %d, %v, %v; want %d, %v", in, rows, quoted, err, want.rows, want.quoted)
		}
	}
}

// TestReadPodsFileMatchesReadPods: the file reader, which sizes its
// output from a line count, reads what ReadPods reads.
func TestReadPodsFileMatchesReadPods(t *testing.T) {
	data := podHeader + "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n\n" +
		"p1,6000,12288,1,460,V100M16|V100M32,LS,Pending,427061,12902960,\n"
	path := filepath.Join(t.TempDir(), "pods.csv")
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPodsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadPods(path, strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || fmt.Sprint(got) != fmt.Sprint(want) || got[1].GPUSpec != "V100M16|V100M32" || got[1].Line != 4 {
		t.Errorf("ReadPodsFile = %+v\nReadPods = %+v", got, want)
	}
}

// TestPlainMatchesCSV: the plain reader, used for files without '"',
// gives what encoding/csv gives, on line endings, blank lines, field
// counts, a BOM and over-long lines (encoding/csv's readLine in
// src/encoding/csv/reader.go drops a '\r' before "\n" and before the end of
// the input, and skips lines that are empty after that).
func TestPlainMatchesCSV(t *testing.T) {
	row := "p,1,2,0,0,,LS,Running,0,5,\n"
	long := strings.Repeat("x", maxLineLen)
	for _, in := range []string{
		podHeader + row,
		podHeader + "p,1,2,0,0,,LS,Running,0,5,",
		podHeader + "p,1,2,0,0,,LS,Running,0,5,\r",
		podHeader + "p,1,2,0,0,,LS,Running,0,5,\r\r",
		podHeader + "\r\n\n\r\n" + row + "\r",
		strings.ReplaceAll(podHeader, "\n", "\r\n") + "q,1,2,0,0,,LS,Run\rning,0,5,\r\n",
		"\ufeff" + podHeader + row,
		podHeader + "p,1,2\n",
		podHeader + row + "q,1,2,0,0,,LS,Running,0,5,,\n",
		podHeader + row + "\n\n",
		podHeader,
		"\n\n",
		podHeader + "p" + long + ",1,2,0,0,,LS,Running,0,5,\n",
		podHeader + long[:maxLineLen-len(row)+1] + row + row,
		podHeader + long[:maxLineLen-len(row)+2] + row + row,
		podHeader + row + "q,1,2,0,0,," + long,
	} {
		want, werr := ReadPods("pods.csv", strings.NewReader(in))
		got, gerr := readPods("pods.csv", strings.NewReader(in), 0, true)
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", got) {
			t.Errorf("%.60q: encoding/csv: %.200v, %v\nplain: %.200v, %v", in, want, werr, got, gerr)
		}
	}
}

// TestReadPodsFilePlain: a file without '"' takes the plain reader, one
// with a quote encoding/csv; both read the same pods.
func TestReadPodsFilePlain(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"plain.csv":  podHeader + "p0,1,2,0,0,,LS,Running,0,5,\r\np1,1,2,1,500,A|B,BE,Pending,1,6,2\r\n",
		"quoted.csv": podHeader + "p0,1,2,0,0,,LS,Running,0,5,\r\n\"p1\",1,2,1,500,A|B,BE,Pending,1,6,2\r\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		pods, err := ReadPodsFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) != 2 || pods[1].Name != "p1" || pods[1].GPUSpec != "A|B" || pods[1].QoS != "BE" || pods[1].Line != 3 || pods[1].Scheduled != 2 {
			t.Errorf("%s: %+v", name, pods)
		}
	}
}

// TestNameSetCollisions: names whose hashes collide are still told
// apart, and the first repeated name, in order, is reported with the line
// of its first use.
func TestNameSetCollisions(t *testing.T) {
	tb := &table{file: "pods.csv"}
	for _, tc := range []struct {
		names []string
		want  string
	}{
		{[]string{"a", "b", "c"}, "<nil>"},
		{[]string{"a", "b", "c", "b", "a"}, `pods.csv:13: column name: pod "b" already defined on line 11`},
		{[]string{"a", "b", "a", "b"}, `pods.csv:12: column name: pod "a" already defined on line 10`},
	} {
		for _, collide := range []bool{false, true} {
			s := newNameSet(0)
			if collide {
				s.hash = func(string) uint64 { return 7 }
			}
			for _, n := range tc.names {
				s.add(n)
			}
			err := s.duplicate(tb, "name", "pod", func(i int) (string, int) { return tc.names[i], 10 + i })
			if fmt.Sprint(err) != tc.want {
				t.Errorf("%v, collide %v: %v, want %s", tc.names, collide, err, tc.want)
			}
		}
	}
}

// TestDuplicateBeforeLaterErrors: a repeated name is reported before an
// error of a later row, and before another error of its own row, but
// after the errors of earlier rows.
func TestDuplicateBeforeLaterErrors(t *testing.T) {
	row := func(name, cpu string) string { return name + "," + cpu + ",1,0,0,,,,0,1,0\n" }
	for _, tc := range []struct{ in, want string }{
		{podHeader + row("p", "1") + row("q", "1") + row("p", "1") + row("r", "x"), `pods.csv:4: column name: pod "p" already defined on line 2`},
		{podHeader + row("p", "1") + row("p", "x"), `pods.csv:3: column name: pod "p" already defined on line 2`},
		{podHeader + row("p", "1") + row("q", "x") + row("p", "1"), `pods.csv:3: column cpu_milli: "x" is not an integer`},
		{podHeader + row("p", "1") + row("", "1") + row("p", "1"), `pods.csv:3: column name: empty pod name`},
		{podHeader + row("p", "1") + row("p", "1") + "a,b\n", `pods.csv:3: column name: pod "p" already defined on line 2`},
	} {
		for _, plain := range []bool{false, true} {
			_, err := readPods("pods.csv", strings.NewReader(tc.in), 0, plain)
			if fmt.Sprint(err) != tc.want {
				t.Errorf("%q, plain %v: %v, want %s", tc.in, plain, err, tc.want)
			}
		}
	}
}
