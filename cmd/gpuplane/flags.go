// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpuplane/gpuplane/internal/hint"
)

// The standard flag package parses -name and --name alike but prints one
// dash in its help and errors, and answers an unknown flag with the whole
// help. command writes the help itself, with two dashes and short forms
// (-o, --format), and answers a refused command line in one line that
// names the nearest flag. cmd/gpuplane stays off pflag (net, cgo).

// command is a subcommand's flag set with its help.
type command struct {
	fs *flag.FlagSet
	// name is how errors and help call the command: "gpuplane simulate".
	name string
	// doc leads the help, before the flags; extra follows them.
	doc, extra string
	// short maps a short form to its flag: "o" → "format". Both are
	// defined in fs (alias binds the short one).
	short map[string]string
	// args names a flag's value in the help: "fill|replay"; else the
	// usage's back-quoted word or the value's type, in capitals.
	args map[string]string
}

// newCommand returns a command whose flag set writes nothing itself.
func newCommand(name, doc string) *command {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{fs: fs, name: name, doc: doc, short: map[string]string{}, args: map[string]string{}}
}

// alias defines -s as a short form of the already defined flag long.
func (c *command) alias(s, long string) {
	f := c.fs.Lookup(long)
	c.fs.Var(f.Value, s, "short for --"+long)
	c.short[s] = long
}

// help writes the command's help: doc, the flags with two dashes, extra.
func (c *command) help(w io.Writer) {
	fmt.Fprint(w, c.doc)
	longOf := map[string]string{}
	for s, l := range c.short {
		longOf[l] = s
	}
	type row struct{ left, usage string }
	var rows []row
	width := 0
	c.fs.VisitAll(func(f *flag.Flag) {
		if _, isShort := c.short[f.Name]; isShort {
			return
		}
		arg, usage := flag.UnquoteUsage(f)
		left := "    --" + f.Name // aligned under "-o, --format"
		if len(f.Name) == 1 {
			left = "-" + f.Name
		}
		if s, ok := longOf[f.Name]; ok {
			left = "-" + s + ", --" + f.Name
		}
		left = "  " + left
		if a, ok := c.args[f.Name]; ok {
			left += " " + a
		} else if arg != "" {
			left += " " + strings.ToUpper(arg)
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" {
			usage += " (default " + d + ")"
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	for _, r := range rows {
		fmt.Fprintf(w, "%-*s  %s\n", width, r.left, r.usage)
	}
	fmt.Fprint(w, c.extra)
}

// parse parses args. -h, --help: the help on stdout and flag.ErrHelp. A
// refused command line: one line on stderr naming the flag with two
// dashes and, for an unknown one, the nearest flag; errUsage.
func (c *command) parse(args []string, stdout, stderr io.Writer) error {
	err := c.fs.Parse(args)
	if err == nil {
		err = c.valueIsFlag()
	}
	if err == nil {
		err = c.emptyValue()
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		c.help(stdout)
		return err
	}
	fmt.Fprintf(stderr, "%s: %s (%s --help lists the flags)\n", c.name, c.explain(err), c.name)
	return errUsage
}

// valueIsFlag refuses a flag whose value is one of the command's flags
// ("--out --force"): the flag package takes the next argument as the
// value, so a forgotten value would silently swallow the next flag.
func (c *command) valueIsFlag() error {
	var err error
	c.fs.Visit(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return
		}
		v := f.Value.String()
		name, _, _ := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if err == nil && strings.HasPrefix(v, "-") && c.fs.Lookup(name) != nil {
			err = fmt.Errorf("flag needs an argument: -%s", f.Name)
		}
	})
	return err
}

// emptyValue refuses a flag given an empty value (--teams "" or
// --mig-config=): every value flag's empty value is its absence, so the
// option would be silently off. The error names the flag.
func (c *command) emptyValue() error {
	var err error
	c.fs.Visit(func(f *flag.Flag) {
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			return
		}
		if err == nil && strings.TrimSpace(f.Value.String()) == "" {
			err = fmt.Errorf("%s: empty value; give one, or leave the flag out", dashes(f.Name))
		}
	})
	return err
}

// explain rewrites an error of the flag package with two-dash names and a
// "did you mean" for an unknown flag.
func (c *command) explain(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		out := "unknown flag " + dashes(name)
		if near := c.nearest(name); near != "" {
			out += "; did you mean " + dashes(near) + "?"
		}
		return out
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return dashes(name) + " needs a value"
	}
	// invalid value "x" for flag -seeds: parse error
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, why, _ := strings.Cut(rest, ": ")
		return msg[:i] + " for " + dashes(name) + ": " + why
	}
	return msg
}

// dashes writes a flag as the user should: -o for a short form, --name
// otherwise.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// nearest returns the flag closest to name: the only flag it begins, else
// the nearest within a third of its length in edits (at least 2); "" if
// none.
func (c *command) nearest(name string) string {
	name = strings.TrimLeft(name, "-")
	if i := strings.IndexByte(name, '='); i >= 0 {
		name = name[:i]
	}
	var names []string
	c.fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) > 1 {
			names = append(names, f.Name)
		}
	})
	sort.Strings(names)
	var pre []string
	for _, n := range names {
		if strings.HasPrefix(n, strings.ToLower(name)) {
			pre = append(pre, n)
		}
	}
	if len(pre) == 1 {
		return pre[0]
	}
	best, bestD := "", max(2, len(name)/3)+1
	for _, n := range names {
		if d := hint.Distance(strings.ToLower(name), n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
