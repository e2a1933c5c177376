package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// ANSI colours for terminals.
const (
	colorReset = "\x1b[0m"
	colorRed   = "\x1b[31m"
	colorGreen = "\x1b[32m"
	colorCyan  = "\x1b[36m"
	colorBold  = "\x1b[1m"
)

// WriteText writes a unified diff per created, changed and deleted object,
// each group of run level and component headed by a "# NN/component" line,
// then the summary line. color adds ANSI colours (for terminals only).
func (r *Result) WriteText(w io.Writer, color bool) error {
	var b bytes.Buffer
	group := ""
	for _, e := range r.Entries {
		if e.Action == Unchanged {
			continue
		}
		if g := groupLabel(e); g != group {
			group = g
			line := "# " + g
			if color {
				line = colorBold + line + colorReset
			}
			b.WriteString(line + "\n")
		}
		for _, line := range strings.SplitAfter(e.Diff, "\n") {
			if line == "" {
				continue
			}
			if color {
				switch {
				case strings.HasPrefix(line, "---"), strings.HasPrefix(line, "+++"):
					line = colorBold + strings.TrimSuffix(line, "\n") + colorReset + "\n"
				case strings.HasPrefix(line, "-"):
					line = colorRed + strings.TrimSuffix(line, "\n") + colorReset + "\n"
				case strings.HasPrefix(line, "+"):
					line = colorGreen + strings.TrimSuffix(line, "\n") + colorReset + "\n"
				case strings.HasPrefix(line, "@@"):
					line = colorCyan + strings.TrimSuffix(line, "\n") + colorReset + "\n"
				}
			}
			b.WriteString(line)
		}
	}
	fmt.Fprintf(&b, "Summary: %s\n", r.Summary())
	_, err := w.Write(b.Bytes())
	return err
}

func groupLabel(e Entry) string {
	if e.RunLevel < 0 {
		return "unordered"
	}
	if e.Component == "" {
		return fmt.Sprintf("%02d", e.RunLevel)
	}
	return fmt.Sprintf("%02d/%s", e.RunLevel, e.Component)
}

// WriteSummary writes only the summary line.
func (r *Result) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintf(w, "Summary: %s\n", r.Summary())
	return err
}

type jsonEntry struct {
	Action    Action `json:"action"`
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	File      string `json:"file,omitempty"`
	RunLevel  *int   `json:"runLevel"`
	Component string `json:"component,omitempty"`
	Diff      string `json:"diff,omitempty"`
}

// WriteJSON writes {"summary": {...}, "objects": [...]} with one entry per
// created, changed or deleted object (action, group, kind, namespace, name,
// file, runLevel, component, diff).
func (r *Result) WriteJSON(w io.Writer) error {
	out := struct {
		Summary Summary     `json:"summary"`
		Objects []jsonEntry `json:"objects"`
	}{Summary: r.Summary(), Objects: []jsonEntry{}}
	for _, e := range r.Entries {
		if e.Action == Unchanged {
			continue
		}
		je := jsonEntry{Action: e.Action, Group: e.ID.Group, Kind: e.ID.Kind, Namespace: e.ID.Namespace, Name: e.ID.Name,
			File: e.File, Component: e.Component, Diff: e.Diff}
		if e.RunLevel >= 0 {
			level := e.RunLevel
			je.RunLevel = &level
		}
		out.Objects = append(out.Objects, je)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
