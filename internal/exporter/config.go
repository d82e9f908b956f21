package exporter

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"
)

// LoadFields reads a metrics file (see ParseFields) and returns the fields it
// selects. Errors name the file and line.
func LoadFields(path string) ([]Field, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err // *fs.PathError names the file
	}
	return ParseFields(path, data)
}

// ParseFields parses a metrics file in dcgm-exporter's counters format, one
// metric a line:
//
//	# comment
//	DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).
//
// The first column is a field name gpuplane serves (see AllFields), the
// second its type, which must be the type gpuplane serves it as, and the
// optional third the help text (it may contain commas; empty keeps gpuplane's
// own). Blank lines and lines starting with '#' are skipped. The result keeps
// the file's order. name is the file name used in errors.
func ParseFields(name string, data []byte) ([]Field, error) {
	var out []Field
	seen := make(map[string]int)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cols := strings.SplitN(text, ",", 3)
		fieldName := strings.TrimSpace(cols[0])
		if len(cols) < 2 {
			return nil, fmt.Errorf("%s:%d: %q: want \"NAME, TYPE[, HELP]\"", name, line, fieldName)
		}
		f, ok := lookupField(fieldName)
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q is not a field gpuplane serves (see docs/metrics.md)", name, line, fieldName)
		}
		if prev, dup := seen[fieldName]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed twice (first on line %d)", name, line, fieldName, prev)
		}
		seen[fieldName] = line
		typ := Type(strings.TrimSpace(cols[1]))
		if typ != f.Type {
			return nil, fmt.Errorf("%s:%d: %s: type %q, but gpuplane serves it as a %s", name, line, fieldName, typ, f.Type)
		}
		if len(cols) == 3 {
			if help := strings.TrimSpace(cols[2]); help != "" {
				if !utf8.ValidString(help) {
					return nil, fmt.Errorf("%s:%d: %s: help is not valid UTF-8", name, line, fieldName)
				}
				f.Help = help
			}
		}
		out = append(out, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no metrics listed", name)
	}
	return out, nil
}
