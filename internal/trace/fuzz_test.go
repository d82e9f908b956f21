// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package trace

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzReadPods checks that no input makes ReadPods panic, that what it
// accepts is valid, and that on input without '"' the plain reader gives
// the same pods or the same error as encoding/csv.
func FuzzReadPods(f *testing.F) {
	f.Add([]byte(podHeader + "p0,12000,16384,1,1000,,LS,Running,0,12537496,0\n"))
	f.Add([]byte(podHeader + "p1,6000,12288,1,460,V100M16|V100M32,LS,Pending,427061,12902960,\n"))
	f.Add([]byte("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n\"a\"\"b\",1,2,8,1000\n"))
	f.Add([]byte(""))
	f.Add([]byte(podHeader + "p0,1,2,0,0,,,,,,\r\n\r\n\rp1,1,2,0,0,,,,,,\r"))
	f.Add([]byte("\ufeffname,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := ReadPods("fuzz.csv", bytes.NewReader(data))
		if !bytes.Contains(data, []byte{'"'}) {
			// The plain reader must read what encoding/csv reads.
			plain, perr := readPods("fuzz.csv", bytes.NewReader(data), 0, true)
			if fmt.Sprint(err) != fmt.Sprint(perr) || fmt.Sprintf("%+v", pods) != fmt.Sprintf("%+v", plain) {
				t.Fatalf("encoding/csv: %+v, %v\nplain: %+v, %v", pods, err, plain, perr)
			}
		}
		if err != nil {
			return
		}
		for _, p := range pods {
			if p.CPUMilli < 0 || p.MemoryMiB < 0 || p.NumGPU < 0 || p.NumGPU > 64 || p.GPUMilli < 0 || p.GPUMilli > 1000 ||
				(p.NumGPU > 1 && p.GPUMilli != 1000) || (p.NumGPU == 0) != (p.GPUMilli == 0) || p.Name == "" {
				t.Fatalf("accepted an invalid pod %+v", p)
			}
		}
	})
}

// FuzzReadNodes checks that no input makes ReadNodes panic.
func FuzzReadNodes(f *testing.F) {
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\n"))
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nn,96000,393216,0,\n"))
	f.Add([]byte("sn,gpu\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		nodes, err := ReadNodes("fuzz.csv", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.CPUMilli < 0 || n.MemoryMiB < 0 || n.GPUs < 0 || n.GPUs > 64 || (n.GPUs > 0 && n.Model == "") {
				t.Fatalf("accepted an invalid node %+v", n)
			}
		}
	})
}
