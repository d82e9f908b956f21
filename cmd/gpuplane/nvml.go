package main

import (
	"github.com/gpuplane/gpuplane/internal/device"
	"github.com/gpuplane/gpuplane/internal/device/nvml"
)

// openNVML opens the nvml backend; without the NVIDIA driver it returns an
// error saying so.
func openNVML() (device.Backend, error) {
	return nvml.Open()
}
