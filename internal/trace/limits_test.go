// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestHugeValuesGiveShortErrors: a fault report fed a 300,000,000-digit
// gpu_milli and got a 300 MB error; half a megabyte of any value must give an
// error of at most a few hundred bytes that still names the line and
// column.
func TestHugeValuesGiveShortErrors(t *testing.T) {
	huge := strings.Repeat("9", 1<<19)
	cases := []struct{ name, in, want string }{
		{"gpu_milli", podHeader + "p,1,1,1," + huge + ",,,,0,1,0\n", `pods.csv:2: column gpu_milli: "9999999999999999999999999999999999999999"… (524288 bytes) is not an integer: longer than 32 characters`},
		{"pod name", podHeader + huge + ",1,1,0,0,,,,0,1,0\n", `pods.csv:2: column name: pod name "9999999999999999999999999999999999999999"… (524288 bytes) longer than 253 characters`},
		{"time", podHeader + "p,1,1,0,0,,,," + huge + ",1,0\n", `pods.csv:2: column creation_time: "9999999999999999999999999999999999999999"… (524288 bytes) is not a time in seconds`},
		{"gpu_spec", podHeader + "p,1,1,1,1000," + huge + ",,,0,1,0\n", `pods.csv:2: column gpu_spec: "9999999999999999999999999999999999999999"… (524288 bytes) longer than 4096 characters`},
		{"qos", podHeader + "p,1,1,0,0,," + huge + ",,0,1,0\n", `pods.csv:2: column qos: "9999999999999999999999999999999999999999"… (524288 bytes) longer than 63 characters`},
		{"header", "name," + huge + "\n", `pods.csv:1: column 2: name "9999999999999999999999999999999999999999"… (524288 bytes) longer than 63 characters`},
		// 254 characters: one more than Kubernetes allows in a name.
		{"name 254", podHeader + strings.Repeat("a", 254) + ",1,1,0,0,,,,0,1,0\n", `pods.csv:2: column name: pod name "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"… (254 bytes) longer than 253 characters`},
	}
	for _, tc := range cases {
		_, err := ReadPods("pods.csv", strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || len(err.Error()) > 300 {
			t.Errorf("%s: err = %.300v, want %q", tc.name, err, tc.want)
		}
	}
	_, err := ReadNodes("nodes.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nn,1,1,1,"+huge+"\n"))
	if want := `nodes.csv:2: column model: "9999999999999999999999999999999999999999"… (524288 bytes) longer than 63 characters`; err == nil || err.Error() != want {
		t.Errorf("model: err = %.300v, want %q", err, want)
	}
	// A line over 1 MiB is refused before it is read whole: line 3 here.
	_, err = ReadPods("pods.csv", strings.NewReader(podHeader+"p,1,1,0,0,,,,0,1,0\nq,1,1,1,"+huge+huge+huge+",,,,0,1,0\n"))
	if want := "pods.csv:3: column gpu_milli: line longer than 1048576 bytes"; err == nil || err.Error() != want {
		t.Errorf("long line: err = %.300v, want %q", err, want)
	}
	// 253 characters is a valid name.
	if _, err := ReadPods("pods.csv", strings.NewReader(podHeader+strings.Repeat("a", 253)+",1,1,0,0,,,,0,1,0\n")); err != nil {
		t.Errorf("253-character name: %v", err)
	}
}

// TestIntegerColumns: "16000.0" is how some exports write 16000; 1e3 and
// hex are refused.
func TestIntegerColumns(t *testing.T) {
	pods, err := ReadPods("pods.csv", strings.NewReader(podHeader+"p,16000.0,2048.00,1,1000,,,,0,1,0\n"))
	if err != nil || pods[0].CPUMilli != 16000 || pods[0].MemoryMiB != 2048 {
		t.Fatalf("16000.0: %v %+v", err, pods)
	}
	for in, want := range map[string]string{
		"1e3":    `pods.csv:2: column cpu_milli: "1e3" is not an integer: write it without an exponent`,
		"1.5":    `pods.csv:2: column cpu_milli: "1.5" is not an integer`,
		"0x10":   `pods.csv:2: column cpu_milli: "0x10" is not an integer`,
		"1000E0": `pods.csv:2: column cpu_milli: "1000E0" is not an integer: write it without an exponent`,
		"eight":  `pods.csv:2: column cpu_milli: "eight" is not an integer`, // an e, but no exponent
	} {
		_, err := ReadPods("pods.csv", strings.NewReader(podHeader+"p,"+in+",1,0,0,,,,0,1,0\n"))
		if err == nil || err.Error() != want {
			t.Errorf("%s: err = %v, want %q", in, err, want)
		}
	}
}

// TestSyntaxErrorsNameTheColumn: a bare quote inside memory_mib (the
// third field) of line 3; a quoted field of line 2 that never closes
// (encoding/csv reports the line where the field opened),
// opened in cpu_milli; a row with 3 fields against a header of 11.
func TestSyntaxErrorsNameTheColumn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{podHeader + "p0,1,1,0,0,,,,0,1,0\np1,1,1\"2,0,0,,,,0,1,0\n", `pods.csv:3: column memory_mib: bare " in non-quoted-field`},
		{podHeader + "p,\"1,1,0,0,,,,0,1,0\n", `pods.csv:2: column cpu_milli: extraneous or missing " in quoted-field`},
		{podHeader + "p,1,1\n", `pods.csv:2: wrong number of fields: the row has 3, the header 11`},
	} {
		_, err := ReadPods("pods.csv", strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// TestWarnings: a CPU node that names a GPU model; qos and pod_phase
// values the openb lists do not use.
func TestWarnings(t *testing.T) {
	nodes, err := ReadNodes("nodes.csv", strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\ng,1,1,2,T4\nc,1,1,0,T4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if nodes[1].Model != "" || nodes[1].IgnoredModel != "T4" {
		t.Fatalf("node c: %+v", nodes[1])
	}
	pods, err := ReadPods("pods.csv", strings.NewReader(podHeader+
		"a,1,1,0,0,,LS,Running,0,1,0\nb,1,1,0,0,,Gold,Running,0,1,0\nc,1,1,0,0,,Gold,Runing,0,1,0\nd,1,1,0,0,,,,0,1,0\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`nodes.csv:3: node "c" has 0 GPUs and GPU model "T4", which is ignored (1 such nodes)`,
		`pods.csv:3: column qos: unknown value "Gold" in 2 pods (the openb lists use LS, BE, Burstable, Guaranteed); it is kept, and the simulator does not use it`,
		`pods.csv:4: column pod_phase: unknown value "Runing" in 1 pods (the openb lists use Running, Pending, Succeeded, Failed); it is kept, and the simulator does not use it`,
	}
	if got := Warnings("nodes.csv", nodes, "pods.csv", pods); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got, want)
	}
}

// TestPodSpecSize: a PodSpec stays at 128 bytes (2 × 8 for the name, 8 +
// 8 for CPU and memory, 3 × 16 for gpu_spec, qos and pod_phase, 3 × 8 for
// the times, 1 + 1 + 2 + 4 for num_gpu, resource, gpu_milli and the line,
// 8 for a snapshot pod's node filter, 1 for the vendors padded to 8), so
// that 14 million pods take 1.8 GB (1,792,000,000 bytes).
func TestPodSpecSize(t *testing.T) {
	if got := unsafe.Sizeof(PodSpec{}); got != 128 {
		t.Errorf("PodSpec is %d bytes, want 128", got)
	}
}

// TestWholeSecondsMatchesParseFloat: the digits-only fast path gives
// strconv.ParseFloat's value, and leaves everything else to it.
func TestWholeSecondsMatchesParseFloat(t *testing.T) {
	for _, s := range []string{"0", "007", "12537496", "999999999999999", "9007199254740993", "1.5", "1e3", "-1", "+1", "", " 1"} {
		v, ok := wholeSeconds(s)
		want, err := strconv.ParseFloat(s, 64)
		fast := len(s) > 0 && len(s) <= 15 && strings.Trim(s, "0123456789") == ""
		if ok != fast || (ok && (err != nil || v != want)) {
			t.Errorf("wholeSeconds(%q) = %v, %v; ParseFloat = %v, %v", s, v, ok, want, err)
		}
	}
}
