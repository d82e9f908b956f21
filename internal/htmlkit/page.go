// Copyright 2026 The gpuplane Authors
// SPDX-License-Identifier: Apache-2.0

package htmlkit

import "html"

// CSS is the style both reports share: the page, headings, tables (in a
// scrolling .wrap; the first column left, the others right), charts,
// notes (.note) and the lead paragraph (.lead). A report adds its own
// rules after it (Head's css).
const CSS = `body{font-family:system-ui,sans-serif;margin:24px auto;max-width:960px;padding:0 16px;color:#222;line-height:1.4}` +
	`h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}` +
	`.wrap{overflow-x:auto}table{border-collapse:collapse;margin:8px 0;font-size:13px}` +
	`td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td{white-space:nowrap}th{background:#f4f4f4;font-weight:600}` +
	`td:first-child,th:first-child{text-align:left}` +
	`svg{max-width:100%;height:auto;display:block}.note{color:#555;font-size:13px}.lead{font-size:15px}`

// Head is the start of a self-contained report page up to and including
// <body>: the page titled title, its style CSS and then css, the
// report's own rules.
func Head(title, css string) string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
		`<title>` + html.EscapeString(title) + `</title><style>` + CSS + css + `</style></head><body>`
}
