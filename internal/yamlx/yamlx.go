// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

// Package yamlx is gpuplane's one strict YAML reader: every file format
// that gpuplane reads as YAML (cluster and node files, mig-parted configs,
// teams files, GPU policies, the node agent's configuration) reads its
// document with Parse and walks it with these helpers, so that every error
// reads "file:line: path: reason", an unknown key says which key was meant
// ("did you mean") or where it belongs ("it belongs under"), and a count
// refuses a fraction. It links only go.yaml.in/yaml/v3, so the offline
// binary cmd/gpuplane can use it.
//
// A format is read in one of two ways. A hand-written walker (the cluster
// YAML, mig-parted configs) reads each mapping with Fields and its values
// with Int, Number, Bool, Strings and StringMap; an unknown key is then
// `path: unknown field "k" (known: a, b); did you mean "a"?`. A format
// decoded into Go structs (teams files, GPU policies, mock profiles) or
// described by a hand-written Key tree (the node agent's NVIDIA
// configuration) is checked whole by Check first, which reports every
// unknown key as `path.k: unknown field; it belongs under x` (or "did you
// mean"), and then decoded (Decode); Checked.Locate adds the line of the
// field a later validation error names.
package yamlx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/gpuplane/gpuplane/internal/hint"
)

// maxQuoted is the most bytes of a value an error quotes.
const maxQuoted = 40

// Quote quotes s for an error, cut to 40 bytes with its length after.
func Quote(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// Parse reads r as one YAML document and returns its top node, or nil for
// an empty file (no document). A syntax error or a second document (other
// than an empty one, a trailing "---") is an error naming file and line.
func Parse(file string, r io.Reader) (*yaml.Node, error) {
	lc := &lineCounter{r: r}
	dec := yaml.NewDecoder(lc)
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, nil
	} else if err != nil {
		return nil, syntax(file, err, lc.lines())
	}
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !empty(&extra) {
			return nil, fmt.Errorf("%s:%d: a second YAML document; give one", file, max(extra.Line, 1))
		}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0], nil
	}
	return &doc, nil
}

// empty reports whether doc is an empty document (a "---" with nothing
// after it).
func empty(doc *yaml.Node) bool {
	if len(doc.Content) == 0 {
		return true
	}
	c := doc.Content[0]
	return len(doc.Content) == 1 && c.Kind == yaml.ScalarNode && c.Tag == "!!null" && c.Value == ""
}

// ReadMapping reads r with Parse and returns its top mapping; an empty
// file is "file:1: empty file", another top "file:line: want <want>".
func ReadMapping(file string, r io.Reader, want string) (*yaml.Node, error) {
	top, err := Parse(file, r)
	if err != nil {
		return nil, err
	}
	if top == nil {
		return nil, fmt.Errorf("%s:1: empty file", file)
	}
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s:%d: want %s", file, top.Line, want)
	}
	return top, nil
}

// lineRE is the "line N: " that go.yaml.in/yaml/v3 errors start with;
// typeRE the " in type pkg.T" that names a Go type.
var (
	lineRE = regexp.MustCompile(`^line (\d+): `)
	typeRE = regexp.MustCompile(` in type [A-Za-z0-9_.\[\]*]+$`)
)

// Syntax rewrites a go.yaml.in/yaml/v3 error, "yaml: line N: msg" or a
// decoding error's first "line N: msg", as "file:N: msg", without the
// names of Go types.
func Syntax(file string, err error) error { return syntax(file, err, 0) }

// lineCounter counts the lines of what is read through it.
type lineCounter struct {
	r        io.Reader
	newlines int
	last     byte
	any      bool
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.newlines += bytes.Count(p[:n], []byte("\n"))
		c.last, c.any = p[n-1], true
	}
	return n, err
}

// lines is the number of lines read: a last line without its newline
// counts.
func (c *lineCounter) lines() int {
	if c.any && c.last != '\n' {
		return c.newlines + 1
	}
	return c.newlines
}

// syntax is Syntax; a line past lines (a problem found at the end of a
// file of that many lines; 0: unknown) is the last line.
func syntax(file string, err error, lines int) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := typeRE.ReplaceAllString(te.Errors[0], "")
		if lineRE.MatchString(msg) {
			return errors.New(lineRE.ReplaceAllString(msg, file+":$1: "))
		}
		return fmt.Errorf("%s: %s", file, msg)
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := lineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		rest := msg[len(m[0]):]
		if parserProblem(rest) {
			// go.yaml.in/yaml/v3 (decode.go, (*parser).fail) adds 1 to
			// the 0-based mark of a scanner error only: a parser error
			// names the line before the one it means.
			line++
		}
		if lines > 0 && line > lines {
			line = lines
		}
		return fmt.Errorf("%s:%d: %s", file, line, rest)
	}
	if parserProblem(msg) {
		return fmt.Errorf("%s:1: %s", file, msg) // a mark on the first line (0) is left out
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// parserProblems are the problems go.yaml.in/yaml/v3's parser reports
// (parserc.go, yaml_parser_set_parser_error and _context), as opposed
// to its scanner's.
var parserProblems = []string{
	"did not find expected <stream-start>", "did not find expected <document start>",
	"did not find expected node content", "did not find expected key",
	"did not find expected '-' indicator", "did not find expected ',' or ']'",
	"did not find expected ',' or '}'", "found duplicate %YAML directive",
	"found incompatible YAML document", "found duplicate %TAG directive",
	"found undefined tag handle",
}

func parserProblem(msg string) bool {
	for _, p := range parserProblems {
		if msg == p {
			return true
		}
	}
	return false
}

// Errorf is an error at node n (its line; line 1 for nil) and path:
// "file:line: path: reason", or "file:line: reason" for an empty path.
func Errorf(file string, n *yaml.Node, path, format string, a ...any) error {
	line := 1
	if n != nil && n.Line > 0 {
		line = n.Line
	}
	return At(file, line, path, format, a...)
}

// At is Errorf with a line number.
func At(file string, line int, path, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if path == "" {
		return fmt.Errorf("%s:%d: %s", file, line, msg)
	}
	return fmt.Errorf("%s:%d: %s: %s", file, line, path, msg)
}

// Field is path.key, or key at the top ("").
func Field(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Item is path[i].
func Item(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Lookup returns the value of key in the mapping n (or in the mapping of
// the document n), nil when absent or n is no mapping.
func Lookup(n *yaml.Node, key string) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// Fields walks the mapping n at path, calling fn for each key and value in
// file order, and returns the keys seen. A value that is no mapping, a
// repeated key ("path.key: given twice") or a key not in known
// ("path: unknown field "k" (known: ...)", with "; did you mean" for a
// near miss) is an error.
func Fields(file, path string, n *yaml.Node, known []string, fn func(k, v *yaml.Node) error) (map[string]bool, error) {
	if n.Kind != yaml.MappingNode {
		return nil, Errorf(file, n, path, "want a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, Errorf(file, k, Field(path, k.Value), "given twice")
		}
		seen[k.Value] = true
		if !contains(known, k.Value) {
			return nil, Errorf(file, k, path, "%s", Unknown(k.Value, known))
		}
		if err := fn(k, v); err != nil {
			return nil, err
		}
	}
	return seen, nil
}

// Unknown says that key is not one of known: `unknown field "k" (want a)`
// for one known key, `(known: a, b, c)` for more, and "; did you mean "x"?"
// when a known key is a near miss.
func Unknown(key string, known []string) string {
	msg := "unknown field " + Quote(key)
	switch len(known) {
	case 0:
	case 1:
		msg += " (want " + known[0] + ")"
	default:
		msg += " (known: " + strings.Join(known, ", ") + ")"
	}
	if s := Suggest(key, known); s != "" {
		msg += "; did you mean " + strconv.Quote(s) + "?"
	}
	return msg
}

// Suggest returns the known key that key most likely misspells: one that
// differs only in case, that key is a prefix of (or the reverse), or that
// is at most a third of its length (at least 2) edits away; "" when none.
func Suggest(key string, known []string) string {
	lk := strings.ToLower(key)
	best, bestD, bestE := "", -1, 0
	for _, k := range known {
		lo := strings.ToLower(k)
		if lo == lk {
			return k
		}
		e := hint.Distance(lk, lo)
		d := e
		if min(len(lk), len(lo)) >= 3 && (strings.HasPrefix(lo, lk) || strings.HasPrefix(lk, lo)) {
			d = min(d, 1)
		}
		if d <= max(2, len(lo)/3) && (bestD < 0 || d < bestD || d == bestD && e < bestE) {
			best, bestD, bestE = k, d, e
		}
	}
	return best
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Scalar returns the value of the scalar v at path.
func Scalar(file, path string, v *yaml.Node) (string, error) {
	if v.Kind != yaml.ScalarNode {
		return "", Errorf(file, v, path, "want a scalar")
	}
	return v.Value, nil
}

// Int reads the scalar v at path as a whole number in [lo, hi]: a
// fraction is "1.5 is not a whole number", another string "x" is not an
// integer, and a value out of range "negative value -1" (lo 0), "value 9
// below 10" or "value 65 above 64".
func Int(file, path string, v *yaml.Node, lo, hi int) (int, error) {
	s, err := Scalar(file, path, v)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil && isFraction(s):
		return 0, Errorf(file, v, path, "%s is not a whole number", s)
	case err != nil:
		return 0, Errorf(file, v, path, "%s is not an integer", Quote(s))
	case n < lo && lo == 0:
		return 0, Errorf(file, v, path, "negative value %d", n)
	case n < lo:
		return 0, Errorf(file, v, path, "value %d below %d", n, lo)
	case n > hi:
		return 0, Errorf(file, v, path, "value %d above %d", n, hi)
	}
	return n, nil
}

// isFraction reports whether s is a decimal number with a fraction or an
// exponent, as YAML's !!float writes one.
func isFraction(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && strings.ContainsAny(s, ".eE") && !strings.ContainsAny(s, "xX")
}

// Number reads the scalar v at path as a decimal number in [0, hi].
func Number(file, path string, v *yaml.Node, hi float64) (float64, error) {
	s, err := Scalar(file, path, v)
	if err != nil {
		return 0, err
	}
	x, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || x != x:
		return 0, Errorf(file, v, path, "%s is not a number", Quote(s))
	case x < 0:
		return 0, Errorf(file, v, path, "negative value %s", s)
	case x > hi:
		return 0, Errorf(file, v, path, "value %s above %v", s, hi)
	}
	return x, nil
}

// Bool reads the scalar v at path as true or false.
func Bool(file, path string, v *yaml.Node) (bool, error) {
	if v.Kind != yaml.ScalarNode || (v.Value != "true" && v.Value != "false") {
		return false, Errorf(file, v, path, "want true or false")
	}
	return v.Value == "true", nil
}

// Strings reads v at path as a list of scalars; what names the items in
// the error ("want a list of <what>").
func Strings(file, path string, v *yaml.Node, what string) ([]string, error) {
	if v.Kind != yaml.SequenceNode {
		return nil, Errorf(file, v, path, "want a list of %s", what)
	}
	out := make([]string, 0, len(v.Content))
	for _, it := range v.Content {
		if it.Kind != yaml.ScalarNode {
			return nil, Errorf(file, v, path, "want a list of %s", what)
		}
		out = append(out, it.Value)
	}
	return out, nil
}

// StringMap reads v at path as a mapping of scalars to scalars, in file
// order of its keys; a repeated key is an error.
func StringMap(file, path string, v *yaml.Node) (map[string]string, []string, error) {
	if v.Kind != yaml.MappingNode {
		return nil, nil, Errorf(file, v, path, "want a mapping of strings")
	}
	out := map[string]string{}
	var keys []string
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind != yaml.ScalarNode || val.Kind != yaml.ScalarNode {
			return nil, nil, Errorf(file, k, path, "want a mapping of strings")
		}
		if _, dup := out[k.Value]; dup {
			return nil, nil, Errorf(file, k, Field(path, k.Value), "given twice")
		}
		out[k.Value] = val.Value
		keys = append(keys, k.Value)
	}
	return out, keys, nil
}
