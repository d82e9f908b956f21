// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// The JSON reports are rounded at output, the simulator's arithmetic left
// exact: a float64 mean such as 629.8996399999997 carries digits no run
// measured. By the name of the field a number is written under:
//
//   - money (a name holding "usd"): to the cent;
//   - seconds (a name ending in "seconds", and the timeline's "t"): to the
//     millisecond;
//   - prices per GPU-hour (the entries of prices_usd_per_gpu_hour), and
//     every other fraction (ratios, means of pods and GPUs, GPU-hours,
//     scales): to 6 significant digits.
//
// Integers (no fraction or exponent) are written as they are.

// roundJSON rewrites the numbers of the JSON document src as above and
// indents it by two spaces.
func roundJSON(src []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var out bytes.Buffer
	type frame struct {
		object bool
		key    string // the last key read, in an object
		parent string // the key this container is the value of
		n      int    // values (objects: keys) written so far
		isKey  bool   // an object's next token is a key
	}
	var stack []frame
	comma := func() {
		if len(stack) == 0 {
			return
		}
		f := &stack[len(stack)-1]
		if f.object && !f.isKey {
			out.WriteByte(':')
			return
		}
		if f.n > 0 {
			out.WriteByte(',')
		}
		f.n++
	}
	after := func() { // a value was written
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].isKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				comma()
				parent := ""
				if len(stack) > 0 {
					parent = stack[len(stack)-1].key
				}
				out.WriteByte(byte(t))
				stack = append(stack, frame{object: t == '{', isKey: true, parent: parent})
			default:
				out.WriteByte(byte(t))
				stack = stack[:len(stack)-1]
				after()
			}
			continue
		case string:
			if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].isKey {
				comma()
				f := &stack[len(stack)-1]
				f.key, f.isKey = t, false
				b, _ := json.Marshal(t)
				out.Write(b)
				continue
			}
			comma()
			b, _ := json.Marshal(t)
			out.Write(b)
		case json.Number:
			comma()
			key, parent := "", ""
			if len(stack) > 0 {
				key, parent = stack[len(stack)-1].key, stack[len(stack)-1].parent
				if !stack[len(stack)-1].object {
					key, parent = parent, "" // an array's numbers go by the array's name
				}
			}
			out.WriteString(roundNumber(string(t), key, parent))
		case bool:
			comma()
			out.WriteString(strconv.FormatBool(t))
		case nil:
			comma()
			out.WriteString("null")
		}
		after()
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, out.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	ind.WriteByte('\n')
	return ind.Bytes(), nil
}

// roundNumber rounds the JSON number s written under key (in an object
// that is the value of parent) as roundJSON says.
func roundNumber(s, key, parent string) string {
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	switch {
	case parent == "prices_usd_per_gpu_hour":
		v = sig(v, 6)
	case strings.Contains(key, "usd"):
		v = math.Round(v*100) / 100
	case strings.HasSuffix(key, "seconds") || key == "t":
		v = math.Round(v*1000) / 1000
	default:
		v = sig(v, 6)
	}
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a < 1e-6 || a >= 1e21 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// sig rounds v to n significant digits.
func sig(v float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}
