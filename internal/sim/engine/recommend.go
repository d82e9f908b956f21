// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package engine

// HoursPerMonth is the month a recommendation prices: 730 hours (8,760
// hours a year / 12), the convention of cloud price lists.
const HoursPerMonth = 730

// Recommendation is the decision a run supports, said in the output of
// gpuplane simulate (report.Recommend, report.RecommendSizing): the best
// policy and sharing mode for the run's goal, the cluster it needs, what
// that costs per month, what it leaves idle, and the margin to the
// runner-up.
type Recommendation struct {
	// Goal is how the candidates were ranked: "highest GPU allocation"
	// (fill), "lowest p95 wait, then highest allocation" (replay), "fewest
	// USD per hour meeting TARGET" (--size).
	Goal string `json:"goal"`
	// Verdict is "recommended"; "tie" when every policy of the chosen
	// sharing mode places the same pods and serves the same GPU demand
	// (Policy is then "": keep yours); "infeasible" when the best
	// candidate places fewer than half the arrived pods (Policy and
	// Sharing are then "": nothing is recommended).
	Verdict string `json:"verdict"`
	// Policy and Sharing are the choice; Sharing is "fractional" for the
	// workload as given (no --sharing).
	Policy  string `json:"policy"`
	Sharing string `json:"sharing"`
	// Isolation is what the sharing mode isolates (engine.Isolation).
	Isolation string `json:"isolation,omitempty"`
	// PlacedPods and ArrivedPods (means over the seeds) and ServedRatio
	// (the GPU demand served over the arrived demand, 0..1) are the best
	// candidate's; USDPerServedGPUHour is USDPerHour (every GPU, idle or
	// not) per GPU of demand it serves.
	PlacedPods          float64 `json:"placed_pods"`
	ArrivedPods         float64 `json:"arrived_pods"`
	ServedRatio         float64 `json:"served_ratio"`
	USDPerServedGPUHour float64 `json:"usd_per_served_gpu_hour,omitempty" round:"cent"`
	// Cluster is the node list the choice runs on (--size: the scaled
	// list), one entry per node type; Nodes and GPUs its totals.
	Cluster []NodeCount `json:"cluster"`
	Nodes   int         `json:"nodes"`
	GPUs    int         `json:"gpus"`
	// USDPerHour is every GPU of Cluster, idle or not, at the run's
	// prices; USDPerMonth is USDPerHour × HoursPerMonth.
	USDPerHour  float64 `json:"usd_per_hour" round:"cent"`
	USDPerMonth float64 `json:"usd_per_month" round:"cent"`
	// IdleGPUs and IdleUSDPerMonth are what the choice leaves on the
	// table: GPU capacity not allocated (fill: at the end; replay: over
	// time; --size: at the answer, from its allocation) and its price per
	// month.
	IdleGPUs        float64 `json:"idle_gpus"`
	IdleUSDPerMonth float64 `json:"idle_usd_per_month" round:"cent"`
	// Value is the choice's measure (Unit), RunnerUpValue the runner-up's.
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
	// RunnerUpPolicy, RunnerUpSharing: the second best; empty with one
	// candidate.
	RunnerUpPolicy  string  `json:"runner_up_policy,omitempty"`
	RunnerUpSharing string  `json:"runner_up_sharing,omitempty"`
	RunnerUpValue   float64 `json:"runner_up_value,omitempty"`
	// Margin is how much better the choice is than the runner-up, in Unit
	// (points of allocation, seconds of p95 wait, USD per month); Spread
	// the seeds' spread it is compared with (the two candidates' population
	// standard deviations added). Significant says Margin > Spread (and,
	// with one seed, is false: no spread was measured).
	Margin      float64 `json:"margin"`
	Spread      float64 `json:"spread"`
	Significant bool    `json:"significant"`
	// Reason says in one line why this choice and how sure.
	Reason string `json:"reason"`
	// Add is, for --size, the nodes to add to the cluster as given: the
	// cheapest answer; Alternatives the other answers (node type, policy,
	// sharing mode), cheapest first, those that never reached the target
	// last.
	Add          *NodeAdd  `json:"add,omitempty"`
	Alternatives []NodeAdd `json:"alternatives,omitempty"`
}

// NodeAdd is one --size answer: add Nodes nodes of node type Type (GPUs
// GPUs of Model each), for USDPerMonth more, under Policy and Sharing.
// Reached false: no number of nodes of the type met the target.
type NodeAdd struct {
	Nodes       int     `json:"nodes"`
	Type        string  `json:"type"`
	Model       string  `json:"model"`
	GPUs        int     `json:"gpus_per_node"`
	USDPerMonth float64 `json:"usd_per_month" round:"cent"`
	Policy      string  `json:"policy"`
	Sharing     string  `json:"sharing"`
	Reached     bool    `json:"reached"`
}

// NodeCount is one node type of a recommended cluster.
type NodeCount struct {
	Model     string  `json:"model,omitempty"` // "" for CPU-only nodes
	GPUs      int     `json:"gpus_per_node"`
	CPU       float64 `json:"cpu_cores"`
	MemoryGiB float64 `json:"memory_gib"`
	Nodes     int     `json:"nodes"`
}
