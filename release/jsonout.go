package release

import (
	"bufio"
	"encoding/json"
	"io"
)

// Field is one more top-level field of a printed report (the ledger's
// state).
type Field struct {
	Name  string
	Value any // nil: left out
}

// WriteJSON prints the windowed report as one indented JSON object —
// byte for byte what json.Encoder with SetIndent("", "  ") prints for it
// with the fields added at the end — encoding one window at a time, so a
// long release is never held as one buffer.
func (wr *WindowedReport) WriteJSON(w io.Writer, fields ...Field) error {
	bw := bufio.NewWriter(w)
	put := func(name string, v any, last bool) error {
		k, _ := json.Marshal(name)
		b, err := json.MarshalIndent(v, "  ", "  ")
		if err != nil {
			return err
		}
		bw.WriteString("  ")
		bw.Write(k)
		bw.WriteString(": ")
		bw.Write(b)
		if !last {
			bw.WriteString(",")
		}
		bw.WriteString("\n")
		return nil
	}
	bw.WriteString("{\n")
	if err := put("window", wr.Width, false); err != nil {
		return err
	}
	if err := put("time_zone", wr.Zone, false); err != nil {
		return err
	}
	if wr.Windows == nil {
		bw.WriteString("  \"windows\": null,\n")
	} else if len(wr.Windows) == 0 {
		bw.WriteString("  \"windows\": [],\n")
	} else {
		bw.WriteString("  \"windows\": [\n")
		for i, win := range wr.Windows {
			b, err := json.MarshalIndent(win, "    ", "  ")
			if err != nil {
				return err
			}
			bw.WriteString("    ")
			bw.Write(b)
			if i < len(wr.Windows)-1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
			if bw.Buffered() > 1<<16 {
				if err := bw.Flush(); err != nil {
					return err
				}
			}
		}
		bw.WriteString("  ],\n")
	}
	var extra []Field
	for _, f := range fields {
		if f.Value != nil {
			extra = append(extra, f)
		}
	}
	if err := put("total", wr.Total, len(extra) == 0); err != nil {
		return err
	}
	for i, f := range extra {
		if err := put(f.Name, f.Value, i == len(extra)-1); err != nil {
			return err
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}
