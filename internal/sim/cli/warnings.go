// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package cli

import (
	"bytes"
	"io"
	"strings"
)

// warnPrefix starts every warning simulate writes to stderr.
const warnPrefix = "simulate: warning: "

// warnings passes what simulate writes to stderr through to w and keeps
// each line that is a warning, so that the reports carry every warning
// the run printed (engine.Report.Warnings), whoever printed it.
type warnings struct {
	w    io.Writer
	line []byte // the line written so far
	got  []string
}

func (c *warnings) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			c.line = append(c.line, rest...)
			break
		}
		c.line = append(c.line, rest[:i]...)
		c.keep(string(c.line))
		c.line = c.line[:0]
		rest = rest[i+1:]
	}
	return c.w.Write(p)
}

// keep keeps line if it is a warning. Progress lines end in \r, so a
// warning may follow one on the same line.
func (c *warnings) keep(line string) {
	if i := strings.LastIndexByte(line, '\r'); i >= 0 {
		line = line[i+1:]
	}
	if msg, ok := strings.CutPrefix(line, warnPrefix); ok {
		c.got = append(c.got, msg)
	}
}

// list returns the warnings kept so far, with any unfinished line; an
// empty list, not nil, when there were none.
func (c *warnings) list() []string {
	if len(c.line) > 0 {
		c.keep(string(c.line))
		c.line = c.line[:0]
	}
	return append([]string{}, c.got...)
}
