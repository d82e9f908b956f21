// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The JSON reports are rounded at output, the simulator's arithmetic left
// exact: a float64 mean such as 629.8996399999997 carries digits no run
// measured. Each field declares its rounding with a struct tag next to its
// json tag; a slice's or a map's tag applies to the numbers it holds:
//
//   - round:"cent": money, to the cent;
//   - round:"ms": seconds, to the millisecond;
//   - no round tag: prices per GPU-hour, and every other fraction (ratios,
//     means of pods and GPUs, GPU-hours, scales): to 6 significant digits.
//
// Integers (no fraction or exponent) are written as they are. A round tag
// that names no rule is an error.

// roundingTag is the struct tag that names a field's rounding.
const roundingTag = "round"

// writeRounded writes v as indented JSON with its numbers rounded as its
// type's round tags say (roundJSON).
func writeRounded(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out, err := roundJSON(b.Bytes(), reflect.TypeOf(v))
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// roundJSON rewrites the numbers of src, the JSON encoding of a value of
// type t, by the round tags of the fields they are written from, and
// indents it by two spaces. Keys, their order and every other token are
// kept. A key t has no field for (one a MarshalJSON method adds) is
// rounded as untagged.
func roundJSON(src []byte, t reflect.Type) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	w := jsonRounder{fields: map[reflect.Type]map[string]reflect.StructField{}}
	top := place{t: t}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := w.token(tok, top); err != nil {
			return nil, err
		}
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, w.out.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	ind.WriteByte('\n')
	return ind.Bytes(), nil
}

// A place is where a JSON value sits in the document: the Go type it is
// written from (nil: unknown) and the round tag of the field that holds
// it ("" for none).
type place struct {
	t    reflect.Type
	rule string
}

// A jsonFrame is an object or array being rewritten.
type jsonFrame struct {
	object bool
	at     place  // the container's own place
	key    string // the last key read, in an object
	n      int    // values (objects: keys) written so far
	isKey  bool   // an object's next token is a key
}

// jsonRounder rewrites a token stream, compact, into out.
type jsonRounder struct {
	out    bytes.Buffer
	stack  []jsonFrame
	fields map[reflect.Type]map[string]reflect.StructField // by JSON name
}

// token writes one token of the document whose top value sits at top.
func (w *jsonRounder) token(tok json.Token, top place) error {
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		w.out.WriteByte(byte(d))
		w.stack = w.stack[:len(w.stack)-1]
		w.after()
		return nil
	}
	if s, ok := tok.(string); ok && len(w.stack) > 0 && w.top().object && w.top().isKey {
		w.separate()
		f := w.top()
		f.key, f.isKey = s, false
		b, _ := json.Marshal(s)
		w.out.Write(b)
		return nil
	}
	w.separate()
	at := top
	if len(w.stack) > 0 {
		f := w.top()
		at = w.child(f.at, f.key, f.object)
	}
	switch t := tok.(type) {
	case json.Delim:
		w.out.WriteByte(byte(t))
		w.stack = append(w.stack, jsonFrame{object: t == '{', at: at, isKey: true})
		return nil
	case string:
		b, _ := json.Marshal(t)
		w.out.Write(b)
	case json.Number:
		s, err := roundNumber(string(t), at.rule)
		if err != nil {
			return err
		}
		w.out.WriteString(s)
	case bool:
		w.out.WriteString(strconv.FormatBool(t))
	case nil:
		w.out.WriteString("null")
	}
	w.after()
	return nil
}

func (w *jsonRounder) top() *jsonFrame { return &w.stack[len(w.stack)-1] }

// separate writes what comes before a key or value: ':' after a key, ','
// between values.
func (w *jsonRounder) separate() {
	if len(w.stack) == 0 {
		return
	}
	f := w.top()
	if f.object && !f.isKey {
		w.out.WriteByte(':')
		return
	}
	if f.n > 0 {
		w.out.WriteByte(',')
	}
	f.n++
}

// after notes that a value was written: an object's next token is a key.
func (w *jsonRounder) after() {
	if len(w.stack) > 0 && w.top().object {
		w.top().isKey = true
	}
}

// child returns the place of a value in the container at p: an array's
// element, a map's value (both under the container's rule), or the value
// of a struct's field named key in JSON (under the field's own rule).
func (w *jsonRounder) child(p place, key string, object bool) place {
	t := p.t
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == nil:
		return place{}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map:
		return place{t: t.Elem(), rule: p.rule}
	case t.Kind() == reflect.Struct && object:
		f, ok := w.jsonFields(t)[key]
		if !ok {
			return place{}
		}
		return place{t: f.Type, rule: f.Tag.Get(roundingTag)}
	}
	return place{}
}

// jsonFields returns the exported fields of struct t by the names
// encoding/json writes them under, embedded structs' fields included.
func (w *jsonRounder) jsonFields(t reflect.Type) map[string]reflect.StructField {
	if m, ok := w.fields[t]; ok {
		return m
	}
	m := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if !f.IsExported() || name == "-" || (f.Anonymous && name == "" && ft.Kind() == reflect.Struct) {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if g, dup := m[name]; !dup || len(f.Index) < len(g.Index) {
			m[name] = f
		}
	}
	w.fields[t] = m
	return m
}

// roundNumber rounds the JSON number s by rule, a round tag's value, as
// the comment above says.
func roundNumber(s, rule string) (string, error) {
	if rule != "" && rule != "cent" && rule != "ms" {
		return "", fmt.Errorf("round:%q: no such rounding (cent, ms, or no tag)", rule)
	}
	if !strings.ContainsAny(s, ".eE") {
		return s, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s, nil
	}
	switch rule {
	case "cent":
		v = math.Round(v*100) / 100
	case "ms":
		v = math.Round(v*1000) / 1000
	default:
		v = sig(v, 6)
	}
	if v == 0 {
		return "0", nil
	}
	if a := math.Abs(v); a < 1e-6 || a >= 1e21 {
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	}
	return strconv.FormatFloat(v, 'f', -1, 64), nil
}

// sig rounds v to n significant digits.
func sig(v float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return r
}
