// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package yamlx

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Key is one key of a file's schema: what its value may hold. A schema is
// written by hand (api/config/v1, with keys ignored or refused) or taken
// from the Go type a file decodes into (SchemaOf).
type Key struct {
	// Kids are the keys of a mapping value; nil: no mapping of known keys.
	Kids map[string]*Key
	// Items is the schema of each element of a list.
	Items *Key
	// Values is the schema of each value of a mapping with free keys.
	Values *Key
	// Int marks a whole number: a fraction (!!float) is refused, since
	// go.yaml.in/yaml/v3 decodes 1.5 into an int as 1.
	Int bool
	// Ignored, when set, marks a key that is accepted and ignored, with a
	// warning saying why; Refused one that is refused, saying why.
	Ignored, Refused string
}

// Checked is what Check found: problems (errors) and warnings, each
// "file:line: path: text", and the line of each path present.
type Checked struct {
	Problems, Warnings []string
	Lines              map[string]int
}

// Err joins the problems, one a line; nil when there are none.
func (c Checked) Err() error {
	if len(c.Problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(c.Problems, "\n"))
}

// Locate names file and the line of the field that the message of err
// starts with ("gpus[0].mig: ..."), or of the nearest enclosing field
// present (a list of scalars has no lines of its own): "file:line: msg";
// "file: msg" when no field of the message is in Lines.
func (c Checked) Locate(file string, err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i > 0 {
		for f := msg[:i]; f != ""; f = f[:max(strings.LastIndexAny(f, ".["), 0)] {
			if line, ok := c.Lines[f]; ok {
				return fmt.Errorf("%s:%d: %s", file, line, msg)
			}
		}
	}
	return fmt.Errorf("%s: %s", file, msg)
}

// Check checks the keys under n against schema: every unknown key
// ("path: unknown field", with where it belongs when the schema has it
// elsewhere, else a near miss among its siblings), repeated key ("listed
// twice"), refused key and fraction given for a whole number is a
// problem. A value of another shape than the schema's is left to the
// decoder, which names the type wanted.
func Check(file string, n *yaml.Node, schema *Key) Checked {
	c := Checked{Lines: map[string]int{}}
	w := walker{file: file, c: &c, homes: homes(schema)}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n != nil {
		w.walk("", n, schema, 0)
	}
	return c
}

type walker struct {
	file  string
	c     *Checked
	homes map[string][]string
	// ints also refuses a string or a collection given for a whole
	// number (Decode, once the decoder refused the file).
	ints bool
}

func (w *walker) add(to *[]string, line int, path, text string) {
	*to = append(*to, fmt.Sprintf("%s:%d: %s: %s", w.file, line, path, text))
}

// maxDepth bounds the walk through aliases.
const maxDepth = 100

func (w *walker) walk(path string, n *yaml.Node, k *Key, depth int) {
	for n.Kind == yaml.AliasNode && n.Alias != nil && depth < maxDepth {
		n = n.Alias
		depth++
	}
	if depth >= maxDepth {
		return
	}
	switch {
	case k.Int && n.Kind == yaml.ScalarNode && n.Tag == "!!float":
		w.add(&w.c.Problems, n.Line, path, n.Value+" is not a whole number")
	case w.ints && k.Int && n.Kind == yaml.ScalarNode && n.Tag != "!!int" && n.Tag != "!!null":
		w.add(&w.c.Problems, n.Line, path, Quote(n.Value)+" is not a whole number")
	case w.ints && k.Int && (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode):
		w.add(&w.c.Problems, n.Line, path, "want a whole number, not a list or mapping")
	case k.Kids != nil && n.Kind == yaml.MappingNode:
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, val := n.Content[i].Value, n.Content[i+1]
			p := Field(path, name)
			line := n.Content[i].Line
			if seen[name] {
				w.add(&w.c.Problems, line, p, "listed twice")
				continue
			}
			seen[name] = true
			kid, ok := k.Kids[name]
			if !ok {
				w.add(&w.c.Problems, line, p, "unknown field"+w.hint(name, k))
				continue
			}
			w.c.Lines[p] = line
			switch {
			case kid.Refused != "":
				w.add(&w.c.Problems, line, p, kid.Refused)
			case kid.Ignored != "":
				w.add(&w.c.Warnings, line, p, "ignored: "+kid.Ignored)
			default:
				w.walk(p, val, kid, depth+1)
			}
		}
	case k.Values != nil && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := Field(path, n.Content[i].Value)
			w.c.Lines[p] = n.Content[i].Line
			w.walk(p, n.Content[i+1], k.Values, depth+1)
		}
	case k.Items != nil && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			p := Item(path, i)
			w.c.Lines[p] = item.Line
			w.walk(p, item, k.Items, depth+1)
		}
	}
}

// hint says where a key found in the wrong place belongs ("; it belongs
// under flags.plugin"), else which sibling it misspells.
func (w *walker) hint(name string, parent *Key) string {
	var at []string
	for _, h := range w.homes[name] {
		if h == "" {
			at = append(at, "the top level")
		} else {
			at = append(at, strings.ReplaceAll(h, "[]", "[*]"))
		}
	}
	if len(at) > 0 {
		return "; it belongs under " + strings.Join(at, " or ")
	}
	known := make([]string, 0, len(parent.Kids))
	for k := range parent.Kids {
		known = append(known, k)
	}
	sort.Strings(known)
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// homes maps each key's name to the paths of the mappings that hold it.
func homes(schema *Key) map[string][]string {
	h := map[string][]string{}
	var walk func(prefix string, k *Key, depth int)
	walk = func(prefix string, k *Key, depth int) {
		if depth > 20 {
			return
		}
		if k.Items != nil {
			walk(prefix+"[]", k.Items, depth+1)
		}
		if k.Values != nil {
			walk(prefix+".*", k.Values, depth+1)
		}
		for name, kid := range k.Kids {
			h[name] = append(h[name], prefix)
			walk(Field(prefix, name), kid, depth+1)
		}
	}
	walk("", schema, 0)
	for _, p := range h {
		sort.Strings(p)
	}
	return h
}

var (
	yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	nodeType        = reflect.TypeFor[yaml.Node]()
)

// SchemaOf returns the schema of the Go type of v as a decoder sees it,
// its field names taken from the tag ("yaml", or "json" for the
// sigs.k8s.io/yaml formats): structs are mappings of known keys (an
// ",inline" field's keys are its parent's), slices lists, maps mappings
// with free keys, and integers whole numbers. A type with its own
// unmarshaler, or a yaml.Node, is not checked.
func SchemaOf(v any, tag string) *Key {
	return schemaOf(reflect.TypeOf(v), tag, map[reflect.Type]bool{})
}

func schemaOf(t reflect.Type, tag string, busy map[reflect.Type]bool) *Key {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nodeType || busy[t] || reflect.PointerTo(t).Implements(yamlUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return &Key{}
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return &Key{Int: true}
	case reflect.Slice, reflect.Array:
		return &Key{Items: schemaOf(t.Elem(), tag, busy)}
	case reflect.Map:
		return &Key{Values: schemaOf(t.Elem(), tag, busy)}
	case reflect.Struct:
		busy[t] = true
		defer delete(busy, t)
		k := &Key{Kids: map[string]*Key{}}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get(tag), ",")
			inline := strings.Contains(","+opts+",", ",inline,") || (tag == "json" && f.Anonymous && name == "")
			switch {
			case name == "-" || (!f.IsExported() && !f.Anonymous):
				continue
			case inline:
				for n, kid := range schemaOf(f.Type, tag, busy).Kids {
					k.Kids[n] = kid
				}
				continue
			case name == "" && tag == "json":
				name = f.Name
			case name == "":
				name = strings.ToLower(f.Name)
			}
			k.Kids[name] = schemaOf(f.Type, tag, busy)
		}
		return k
	}
	return &Key{}
}

// Decode checks n against the schema of v's type (SchemaOf with yaml
// tags) and decodes it into v: the first problem Check finds, or the
// decoder's error as "file:line: path: reason" for a whole number given
// as a string or a collection, else "file:line: reason", is the error.
func Decode(file string, n *yaml.Node, v any) error {
	c := Check(file, n, SchemaOf(v, "yaml"))
	if len(c.Problems) > 0 {
		return errors.New(c.Problems[0])
	}
	if err := n.Decode(v); err != nil {
		// The decoder's "cannot unmarshal !!str `two` into int" names no
		// field: find the whole number it refused.
		if p := intProblem(file, n, SchemaOf(v, "yaml")); p != "" {
			return errors.New(p)
		}
		return Syntax(file, err)
	}
	return nil
}

// intProblem returns the first whole number of the schema under n given
// as a string or a collection ("file:line: path: "two" is not a whole
// number"), "" if none.
func intProblem(file string, n *yaml.Node, schema *Key) string {
	c := Checked{Lines: map[string]int{}}
	w := walker{file: file, c: &c, homes: homes(schema), ints: true}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n != nil {
		w.walk("", n, schema, 0)
	}
	if len(c.Problems) == 0 {
		return ""
	}
	return c.Problems[0]
}
