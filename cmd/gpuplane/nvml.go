package main

import (
	"errors"

	"github.com/gpuplane/gpuplane/internal/device"
)

// openNVML opens the nvml backend.
func openNVML() (device.Backend, error) {
	return nil, errors.New("--backend nvml: not available yet")
}
