// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package prices

import "github.com/gpuplane/gpuplane/api/resource"

// milliPerGPU is one whole GPU in milli-GPU, the openb trace's unit.
const milliPerGPU = resource.MilliPerGPU

// USDPerHour returns what milli milli-GPU of a GPU model priced
// usdPerGPUHour USD per GPU-hour cost, in USD per hour.
func USDPerHour(milli int64, usdPerGPUHour float64) float64 {
	return float64(milli) / milliPerGPU * usdPerGPUHour
}

// Meter integrates a cluster's GPU allocation and its cost over time, in
// seconds: the GPU-hours and USD allocated and idle, and the time-weighted
// allocation ratio. Add the cluster's GPUs with AddCapacity, then Advance
// the clock and Allocate and Release milli-GPU as pods start and end.
type Meter struct {
	start, now          float64 // seconds
	capacityMilli       int64
	totalUSDPerHour     float64 // the whole cluster's price
	allocMilli          float64
	allocUSDPerHour     float64 // the allocated share's price
	allocMilliSeconds   float64 // ∫ allocated milli-GPU dt
	allocUSDHourSeconds float64 // ∫ allocated USD per hour dt
	idleUSDHourSeconds  float64 // ∫ idle USD per hour dt
}

// NewMeter returns a Meter whose clock starts at start seconds.
func NewMeter(start float64) *Meter { return &Meter{start: start, now: start} }

// AddCapacity adds milli milli-GPU of a model priced usdPerGPUHour USD per
// GPU-hour to the cluster.
func (m *Meter) AddCapacity(milli int64, usdPerGPUHour float64) {
	m.capacityMilli += milli
	m.totalUSDPerHour += USDPerHour(milli, usdPerGPUHour)
}

// Advance moves the clock to t seconds, integrating the current allocation
// up to it; a time not after the clock changes nothing.
func (m *Meter) Advance(t float64) {
	if t > m.now {
		dt := t - m.now
		m.allocMilliSeconds += m.allocMilli * dt
		m.allocUSDHourSeconds += m.allocUSDPerHour * dt
		m.idleUSDHourSeconds += (m.totalUSDPerHour - m.allocUSDPerHour) * dt
		m.now = t
	}
}

// Allocate records milli milli-GPU of a model priced usdPerGPUHour
// allocated from now on.
func (m *Meter) Allocate(milli int64, usdPerGPUHour float64) {
	m.allocMilli += float64(milli)
	m.allocUSDPerHour += USDPerHour(milli, usdPerGPUHour)
}

// Release records milli milli-GPU of a model priced usdPerGPUHour freed from
// now on.
func (m *Meter) Release(milli int64, usdPerGPUHour float64) {
	m.allocMilli -= float64(milli)
	m.allocUSDPerHour -= USDPerHour(milli, usdPerGPUHour)
}

// AllocationRatio returns the share of the capacity allocated now (0..1; 0
// without capacity).
func (m *Meter) AllocationRatio() float64 {
	if m.capacityMilli == 0 {
		return 0
	}
	return m.allocMilli / float64(m.capacityMilli)
}

// Span returns the seconds from the start to the clock.
func (m *Meter) Span() float64 { return m.now - m.start }

// TimeWeightedAllocationRatio returns ∫ allocated dt / (capacity · span),
// 0 for an empty span.
func (m *Meter) TimeWeightedAllocationRatio() float64 {
	span := m.Span()
	if span <= 0 || m.capacityMilli == 0 {
		return 0
	}
	return m.allocMilliSeconds / (float64(m.capacityMilli) * span)
}

// AllocatedGPUHours returns the GPU-hours allocated over the span.
func (m *Meter) AllocatedGPUHours() float64 { return m.allocMilliSeconds / milliPerGPU / 3600 }

// IdleGPUHours returns the GPU-hours idle over the span.
func (m *Meter) IdleGPUHours() float64 {
	return (float64(m.capacityMilli)*m.Span() - m.allocMilliSeconds) / milliPerGPU / 3600
}

// AllocatedUSD returns what the allocated GPUs cost over the span, in USD.
func (m *Meter) AllocatedUSD() float64 { return m.allocUSDHourSeconds / 3600 }

// IdleUSD returns what the idle GPUs cost over the span, in USD.
func (m *Meter) IdleUSD() float64 { return m.idleUSDHourSeconds / 3600 }
