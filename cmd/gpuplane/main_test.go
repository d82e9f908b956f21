package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOfflineDeps keeps the offline tool light: it must link no go-nvml
// (cgo), Kubernetes, gRPC or Prometheus package, which the in-cluster
// binaries need and which made a first `go run ./cmd/gpuplane simulate`
// compile for minutes, and no cgo or net at all (cobra's pflag
// would bring both: they cost about 40% of the cold build).
func TestOfflineDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed only %v", deps)
	}
	for _, d := range deps {
		for _, banned := range []string{"k8s.io", "sigs.k8s.io", "google.golang.org/grpc", "github.com/NVIDIA/go-nvml", "github.com/prometheus", "github.com/spf13", "runtime/cgo", "net"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("cmd/gpuplane depends on %s", d)
			}
		}
	}
}
