package main

import (
	"testing"

	"github.com/gpuplane/gpuplane/internal/testenv"
)

// TestOfflineDeps keeps the offline tool light: it must link no go-nvml
// (cgo), Kubernetes, gRPC or Prometheus package, which the in-cluster
// binaries need and which made a first `go run ./cmd/gpuplane simulate`
// compile for minutes, and no cgo or net at all (cobra's pflag
// would bring both: they cost about 40% of the cold build).
func TestOfflineDeps(t *testing.T) {
	testenv.NoDeps(t, "k8s.io", "sigs.k8s.io", "google.golang.org/grpc", "github.com/NVIDIA/go-nvml", "github.com/prometheus", "github.com/spf13", "runtime/cgo", "net")
}
