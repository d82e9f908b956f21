// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cri

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestRecords plays the kubelet's calls for one pod of one container
// and reads the record back; a second runtime on the same directory
// numbers on.
func TestRecords(t *testing.T) {
	dir, err := os.MkdirTemp("", "cri") // short: a unix socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock, records := filepath.Join(dir, "cri.sock"), filepath.Join(dir, "records")
	create := func(attempt uint32) {
		t.Helper()
		r, err := Start(sock, records)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Stop()
		conn, err := grpc.NewClient(r.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		rs := runtimeapi.NewRuntimeServiceClient(conn)
		ctx := t.Context()
		st, err := rs.Status(ctx, &runtimeapi.StatusRequest{})
		if err != nil || len(st.Status.Conditions) != 2 || !st.Status.Conditions[0].Status || !st.Status.Conditions[1].Status {
			t.Fatalf("status %v, %v", st, err)
		}
		rc, err := rs.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
		if err != nil || rc.Linux.CgroupDriver != runtimeapi.CgroupDriver_CGROUPFS {
			t.Fatalf("runtime config %v, %v", rc, err)
		}
		sb := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u1"}}
		run, err := rs.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sb})
		if err != nil {
			t.Fatal(err)
		}
		cc, err := rs.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId: run.PodSandboxId, SandboxConfig: sb,
			Config: &runtimeapi.ContainerConfig{
				Metadata:    &runtimeapi.ContainerMetadata{Name: "main", Attempt: attempt},
				Image:       &runtimeapi.ImageSpec{Image: "any/image:1"},
				Envs:        []*runtimeapi.KeyValue{{Key: "NVIDIA_VISIBLE_DEVICES", Value: []byte("GPU-a,GPU-b")}, {Key: "A", Value: []byte("1")}, {Key: "A", Value: []byte("2")}},
				Devices:     []*runtimeapi.Device{{ContainerPath: "/dev/nvidia0", HostPath: "/dev/nvidia0", Permissions: "rw"}},
				CDIDevices:  []*runtimeapi.CDIDevice{{Name: "nvidia.com/gpu=0"}},
				Mounts:      []*runtimeapi.Mount{{ContainerPath: "/data", HostPath: "/tmp/x", Readonly: true}},
				Annotations: map[string]string{"k": "v"},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rs.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: cc.ContainerId}); err != nil {
			t.Fatal(err)
		}
		cs, err := rs.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: cc.ContainerId})
		if err != nil || cs.Status.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
			t.Fatalf("container status %v, %v", cs, err)
		}
	}
	create(0)
	create(1)
	got, err := ReadRecords(records)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 2 || got[1].Attempt != 1 {
		t.Fatalf("records %+v", got)
	}
	c := got[0]
	if c.Namespace != "ns" || c.Pod != "p" || c.PodUID != "u1" || c.Container != "main" || c.Image != "any/image:1" ||
		c.Env["NVIDIA_VISIBLE_DEVICES"] != "GPU-a,GPU-b" || c.Env["A"] != "2" ||
		len(c.Devices) != 1 || c.Devices[0] != (Device{"/dev/nvidia0", "/dev/nvidia0", "rw"}) ||
		len(c.CDIDevices) != 1 || c.CDIDevices[0] != "nvidia.com/gpu=0" ||
		len(c.Mounts) != 1 || c.Mounts[0] != (Mount{"/data", "/tmp/x", true}) || c.Annotations["k"] != "v" || c.ID == "" {
		t.Errorf("record %+v", c)
	}
	if n := len(Find(got, "ns", "p", "main")); n != 2 {
		t.Errorf("Find: %d records, want 2", n)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left after Stop: %v", err)
	}
}
