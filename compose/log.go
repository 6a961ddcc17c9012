package compose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pufferfish-privacy/pufferfish/internal/strictjson"
	"github.com/pufferfish-privacy/pufferfish/markov"
)

// Log is the JSON release log read by ParseLog (README "Composition"):
//
//	{
//	  "datasets": [{"name": "alice", "length": 1440, "class": "class.json", "theta": "fitted"}],
//	  "releases": [
//	    {"name": "morning", "dataset": "alice", "mechanism": "mqm-exact", "epsilon": 0.5, "start": 1, "end": 720},
//	    {"name": "evening", "dataset": "alice", "mechanism": "mqm-exact", "epsilon": 0.5, "start": 800, "end": 1440}
//	  ],
//	  "dependence": [{"releases": ["morning", "evening"], "delta": 0.1}]
//	}
//
// "class" is a class file (path relative to the log) or an inline class
// object in the format of puff scale --class; it is needed by the parallel
// rule and to tell independent from correlated records.
type Log struct {
	Datasets   []LogDataset    `json:"datasets"`
	Releases   []Release       `json:"releases"`
	Dependence []LogDependence `json:"dependence,omitempty"`
}

// LogDataset is one chain of the log.
type LogDataset struct {
	Name   string          `json:"name"`
	Length int             `json:"length"`
	Class  json.RawMessage `json:"class,omitempty"`
	Theta  string          `json:"theta,omitempty"`
}

// LogDependence is a measured Δ between two releases ([SC17] Thm III.6).
type LogDependence struct {
	Releases []string `json:"releases"`
	Delta    float64  `json:"delta"`
}

// ParseLog reads a release log into a ledger; name is used in errors and
// to resolve class paths (relative to its folder), which open reads (nil:
// class paths are refused; package ledger/logfile opens files).
func ParseLog(r io.Reader, name string, open func(path string) (io.ReadCloser, error)) (*Ledger, error) {
	raw, err := strictjson.ReadAll(r, name)
	if err != nil {
		return nil, err
	}
	var lg Log
	if err := strictjson.Decode(raw, name, &lg); err != nil {
		return nil, err
	}
	l := New()
	l.leakage = true // the log keeps σ (since issue 40): Records' last rule
	for i, d := range lg.Datasets {
		var cl *markov.Class
		if s := strings.TrimSpace(string(d.Class)); s != "" && s != "null" {
			var path string
			if json.Unmarshal(d.Class, &path) == nil {
				if !filepath.IsAbs(path) {
					path = filepath.Join(filepath.Dir(name), path)
				}
				if open == nil {
					return nil, fmt.Errorf("%s: datasets[%d].class: %s: class files are not read here (inline the class)", name, i, path)
				}
				fh, err := open(path)
				if err != nil {
					return nil, fmt.Errorf("%s: datasets[%d].class: %w", name, i, err)
				}
				cl, err = markov.ParseClass(fh, path)
				fh.Close()
				if err != nil {
					return nil, err
				}
			} else if cl, err = markov.ParseClass(bytes.NewReader(d.Class), fmt.Sprintf("%s: datasets[%d].class", name, i)); err != nil {
				return nil, err
			}
		}
		if err := l.AddDataset(Dataset{Name: d.Name, Length: d.Length, Class: cl, Theta: d.Theta}); err != nil {
			return nil, fmt.Errorf("%s: datasets[%d]: %w", name, i, err)
		}
	}
	for i, r := range lg.Releases {
		if err := l.Record(r); err != nil {
			return nil, fmt.Errorf("%s: releases[%d]: %w", name, i, err)
		}
	}
	for i, d := range lg.Dependence {
		if len(d.Releases) != 2 {
			return nil, fmt.Errorf("%s: dependence[%d]: name exactly two releases", name, i)
		}
		for _, n := range d.Releases {
			if !l.has(n) {
				return nil, fmt.Errorf("%s: dependence[%d]: unknown release %q", name, i, n)
			}
		}
		if err := l.Dependence(d.Releases[0], d.Releases[1], d.Delta); err != nil {
			return nil, fmt.Errorf("%s: dependence[%d]: %w", name, i, err)
		}
	}
	return l, nil
}

func (l *Ledger) has(name string) bool {
	for _, r := range l.releases {
		if r.Name == name {
			return true
		}
	}
	return false
}

// Datasets lists the registered dataset names in registration order.
func (l *Ledger) Datasets() []string {
	return slices.Clone(l.order)
}

func jsonIndent(v any) ([]byte, error) { return json.MarshalIndent(v, "", "  ") }
