// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package dra

import "github.com/gpuplane/gpuplane/internal/node/gpucdi"

// DefaultMIGMinorsPath is the NVIDIA driver's table of MIG capability
// minors (gpucdi.DefaultMIGMinorsPath).
const DefaultMIGMinorsPath = gpucdi.DefaultMIGMinorsPath

// migCapDir is where the driver's capability device nodes live.
const migCapDir = gpucdi.MIGCapDir

// parseMIGMinors and readMIGMinors read a MIG minors table
// (gpucdi.ParseMIGMinors, gpucdi.ReadMIGMinors).
var (
	parseMIGMinors = gpucdi.ParseMIGMinors
	readMIGMinors  = gpucdi.ReadMIGMinors
)
