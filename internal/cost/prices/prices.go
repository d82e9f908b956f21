// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package prices is gpuplane's one home for GPU prices and cost arithmetic:
// the default on-demand price of each GPU model with its source, prices
// files, the warnings a price list deserves against a cluster, and the
// conversions from milli-GPU and seconds to USD and GPU-hours that the
// simulator reports. The GPU catalog (internal/gpu) keeps hardware facts
// only.
package prices

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuplane/gpuplane/internal/gpu"
)

// Price is the price of one GPU of a model.
type Price struct {
	// USDPerHour is the on-demand price in USD per GPU-hour.
	USDPerHour float64
	// Source names where the price comes from.
	Source string
}

// Price sources. On-demand list prices of single-GPU (or per-GPU share of
// multi-GPU) cloud instances as the providers' public pricing pages gave them
// in 2025, rounded; cloud prices change often. They are defaults for
// comparing policies, not quotes: override them with a prices file (see
// LoadPrices, gpuplane simulate --prices) for real budgets.
const (
	srcGCP     = "Google Cloud Compute Engine GPU pricing, us-central1 on-demand, per GPU, 2025"
	srcAWSg5   = "AWS EC2 g5.xlarge on-demand (1x A10G), us-east-1, 2025"
	srcAWSg6e  = "AWS EC2 g6e.xlarge on-demand (1x L40S), us-east-1, 2025"
	srcAWSp3dn = "AWS EC2 p3dn.24xlarge on-demand (8x V100 32GB) / 8, us-east-1, 2025"
	srcAWSp5e  = "AWS EC2 p5e.48xlarge on-demand (8x H200) / 8, us-east-1, 2025"
	srcOpaque  = "undisclosed model in the Alibaba openb trace; priced as a V100 (GCP) by assumption"
	srcAzureNC = "estimate: Azure NC40ads H100 v5 on-demand (1x H100 NVL), East US, 2025, as last seen; check before use"
	srcH20     = "estimate: no public on-demand list price outside China; priced as the H100-80GB (GCP) by assumption"
	srcLambda  = "estimate: Lambda Cloud on-demand, per GPU, 2025, as last seen; check before use"
	srcOCIMI   = "estimate: Oracle Cloud BM.GPU.MI300X.8 on-demand, per GPU, 2025, as last seen; check before use"
	srcAsMI    = "estimate: no on-demand list price seen; priced as the MI300X (Oracle Cloud) by assumption"
	srcAsA100  = "estimate: no on-demand list price per device seen; priced as the A100-80GB (GCP) by assumption"
	srcAsH100  = "estimate: no on-demand list price per device seen; priced as the H100-80GB (GCP) by assumption"
)

// defaults are the default prices, by internal/gpu catalog model name.
var defaults = map[string]Price{
	"P100":       {1.46, srcGCP},
	"T4":         {0.35, srcGCP},
	"V100M16":    {2.48, srcGCP},
	"V100M32":    {3.90, srcAWSp3dn},
	"A10":        {1.006, srcAWSg5},
	"G2":         {2.48, srcOpaque},
	"G3":         {2.48, srcOpaque},
	"A100-40GB":  {2.93, srcGCP},
	"A100-80GB":  {3.93, srcGCP},
	"H100-80GB":  {11.06, srcGCP},
	"H200-141GB": {10.76, srcAWSp5e},
	"L4":         {0.56, srcGCP},
	"L40S":       {1.861, srcAWSg6e},
	"H100-NVL":   {6.98, srcAzureNC},
	"H20":        {11.06, srcH20},
	"GH200":      {1.49, srcLambda},
	"B200":       {4.99, srcLambda},
	// AMD and Intel: a price is one device's (a partition of an AMD GPU
	// costs its share, internal/sim's node prices).
	"MI300X": {6.00, srcOCIMI},
	"MI325X": {6.00, srcAsMI},
	"MI355X": {6.00, srcAsMI},
	"MI250X": {3.93, srcAsA100},
	"Gaudi2": {3.93, srcAsA100},
	"Gaudi3": {11.06, srcAsH100},
}

// Prices are GPU prices by model name: the internal/gpu catalog's names and
// any other name a prices file gives. Model names compare without regard
// to case, as the simulator's node and pod lists do (a prices line "t4"
// sets the catalog's "T4"). The zero value is empty; use Default for the
// default prices.
type Prices struct {
	byModel map[string]Price
}

// Default returns a fresh copy of the default prices, one for every catalog
// model; callers may change it without affecting other copies.
func Default() *Prices {
	p := &Prices{byModel: make(map[string]Price, len(defaults))}
	for m, pr := range defaults {
		p.byModel[m] = pr
	}
	return p
}

// Get returns the price of one GPU of the named model.
func (p *Prices) Get(model string) (Price, bool) {
	pr, ok := p.byModel[p.key(model)]
	return pr, ok
}

// key returns the name under which p holds model: the one it already has
// that equals model without regard to case, else model.
func (p *Prices) key(model string) string {
	if _, ok := p.byModel[model]; ok {
		return model
	}
	for m := range p.byModel {
		if strings.EqualFold(m, model) {
			return m
		}
	}
	return model
}

// USDPerHour returns the price of one GPU of the named model in USD per
// GPU-hour, 0 for a model without a price.
func (p *Prices) USDPerHour(model string) float64 {
	pr, _ := p.Get(model)
	return pr.USDPerHour
}

// PartitionUSDPerHour returns the price of one GPU of the named model in
// AMD partition mode part in USD per GPU-hour: its share of the device's
// price, the device being gpu.Partitions GPUs (an MI300X in CPX/NPS1 is
// 8: 6.00 / 8 = 0.75 USD per GPU-hour; an MI250X's GCD half its price);
// USDPerHour for a model without partitions; 0 for a model without a
// price or in a mode it lacks.
func (p *Prices) PartitionUSDPerHour(model string, part gpu.Partition) float64 {
	s, err := gpu.Partitions(model, part)
	if err != nil {
		return 0
	}
	return p.USDPerHour(model) / float64(s.GPUs)
}

// Models returns the priced model names, sorted.
func (p *Prices) Models() []string {
	out := make([]string, 0, len(p.byModel))
	for m := range p.byModel {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Limits of a price in USD per GPU-hour: internal/cost/alloc counts prices
// in micro-USD per GPU-hour, so a positive price below minUSDPerHour would
// count as 0; maxUSDPerHour is far above any GPU's.
const (
	minUSDPerHour = 1e-6
	maxUSDPerHour = 1e6
)

// LoadPrices overrides prices from a file of lines "MODEL USD_PER_GPU_HOUR"
// (whitespace-, comma- or colon-separated; '#' starts a comment). A model
// without a price yet is added. The price is the line's last field and the
// model the rest, so a name may hold spaces ("NVIDIA B200 5"), or be
// quoted ("'NVIDIA B200': 5"). Errors name the file and line: a bad or
// out-of-range price, a model priced twice, a model word that is a number
// ("T4 1 2"), a YAML list item ("- T4: 1"). The colon form with plain or
// quoted names, "A100-80GB: 3.93", is also a YAML mapping of model to USD
// per GPU-hour, so a prices file can be written and read as YAML; a quoted
// price ("3.93") is the number it holds.
func (p *Prices) LoadPrices(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return p.ReadPrices(path, f)
}

// isSep separates the fields of a prices line.
func isSep(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ':' }

// ReadPrices is LoadPrices on a reader; name is used in errors and sources.
func (p *Prices) ReadPrices(name string, r io.Reader) error {
	if p.byModel == nil {
		p.byModel = map[string]Price{}
	}
	sc := bufio.NewScanner(r)
	line := 0
	seen := map[string]int{} // model key -> line
	for sc.Scan() {
		line++
		s := sc.Text()
		if line == 1 {
			s = strings.TrimPrefix(s, "\ufeff")
		}
		model, usdField, err := splitPriceLine(s)
		if err != nil {
			return fmt.Errorf("%s:%d: %v", name, line, err)
		}
		if model == "" {
			continue
		}
		usd, err := strconv.ParseFloat(usdField, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange) || usd < 0 || usd != usd:
			return fmt.Errorf("%s:%d: price %q is not a non-negative number of USD per GPU-hour", name, line, usdField)
		case usd > maxUSDPerHour:
			return fmt.Errorf("%s:%d: price %s USD per GPU-hour is above %s", name, line, usdField, strconv.FormatFloat(maxUSDPerHour, 'f', -1, 64))
		case usd > 0 && usd < minUSDPerHour:
			return fmt.Errorf("%s:%d: price %s USD per GPU-hour is below %s, the smallest counted (0 for free)", name, line, usdField, strconv.FormatFloat(minUSDPerHour, 'f', -1, 64))
		}
		k := p.key(model)
		if l, ok := seen[strings.ToLower(k)]; ok {
			return fmt.Errorf("%s:%d: model %q is priced on line %d too", name, line, model, l)
		}
		seen[strings.ToLower(k)] = line
		p.byModel[k] = Price{USDPerHour: usd, Source: fmt.Sprintf("%s line %d", name, line)}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// splitPriceLine splits a prices line into model and price; both are empty
// for a blank or comment line.
func splitPriceLine(s string) (model, usd string, err error) {
	model, usd, err = splitPriceFields(s)
	// A YAML string price, "3" or '3', is the number it holds.
	if n := len(usd); n >= 2 && (usd[0] == '"' || usd[0] == '\'') && usd[n-1] == usd[0] {
		usd = usd[1 : n-1]
	}
	return model, usd, err
}

func splitPriceFields(s string) (model, usd string, err error) {
	s = strings.TrimSpace(s)
	if s == "-" || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "-\t") {
		return "", "", fmt.Errorf("a YAML list item: want lines \"MODEL: USD_PER_GPU_HOUR\", a mapping, without \"- \"")
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		j := strings.IndexByte(s[1:], s[0])
		if j < 0 {
			return "", "", fmt.Errorf("model %s: no closing quote", s)
		}
		model, s = s[1:j+1], s[j+2:]
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		rest := strings.FieldsFunc(s, isSep)
		if model == "" || len(rest) != 1 {
			return "", "", fmt.Errorf("want \"MODEL USD_PER_GPU_HOUR\", got %d fields", 1+len(rest))
		}
		return model, rest[0], nil
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	fields := strings.FieldsFunc(s, isSep)
	if len(fields) == 0 {
		return "", "", nil
	}
	if len(fields) == 1 {
		return "", "", fmt.Errorf("want \"MODEL USD_PER_GPU_HOUR\", got only %q", fields[0])
	}
	// Two fields or more: a separator precedes the last.
	i := strings.LastIndexFunc(strings.TrimRightFunc(s, isSep), isSep)
	model = strings.TrimRightFunc(s[:i], isSep)
	// A name of words: "NVIDIA B200". A comma or colon inside it, or a
	// word after the first that is a number, is a line of too many fields.
	words := strings.Fields(model)
	bad := strings.ContainsAny(model, ",:")
	for _, w := range words[1:] {
		if _, err := strconv.ParseFloat(w, 64); err == nil {
			bad = true
		}
	}
	if bad {
		return "", "", fmt.Errorf("want \"MODEL USD_PER_GPU_HOUR\", got %d fields (quote a model name with spaces: \"NVIDIA B200\" 5)", len(fields))
	}
	return strings.Join(words, " "), fields[len(fields)-1], nil
}

// Warnings returns what deserves a warning when a cluster whose GPU models
// are models (duplicates and empty names are skipped) is priced by p, whose
// overrides came from file: a model of the cluster without a price (its
// GPUs cost 0), and a model priced that neither the catalog nor the cluster
// has (a misspelling, most likely).
func (p *Prices) Warnings(models []string, file string) []string {
	var out []string
	inCluster := map[string]bool{}
	for _, m := range models {
		if m == "" || inCluster[strings.ToLower(m)] {
			continue
		}
		inCluster[strings.ToLower(m)] = true
		if pr, ok := p.Get(m); !ok || pr.USDPerHour == 0 {
			out = append(out, fmt.Sprintf("no price for GPU model %q; its GPUs cost 0 (give one with --prices)", m))
		}
	}
	return append(out, p.Unknown(models, file)...)
}

// Unknown returns a warning for each model p prices (from file) that
// neither the catalog nor models, the cluster's, has: a misspelling, most
// likely.
func (p *Prices) Unknown(models []string, file string) []string {
	var out []string
	inCluster := map[string]bool{}
	for _, m := range models {
		inCluster[strings.ToLower(m)] = true
	}
	catalog := gpu.Default()
	for _, m := range p.Models() {
		if _, known := catalog.Get(m); !known && !inCluster[strings.ToLower(m)] {
			out = append(out, fmt.Sprintf("%s prices GPU model %q, which neither the catalog nor the cluster has", file, m))
		}
	}
	return out
}
