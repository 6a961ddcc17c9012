package experiment

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The real data files, in the repository's data/ directory (data/README.md
// gives their sources, licences and checksums).
const (
	fileHAR   = "uci_har_activity_sequences.csv.gz"
	filePower = "uci_household_power_2007H1_1min.csv.gz"
	fileWater = "ampds2_water_WHW_1min.csv.gz"
	fileHR    = "physionet_meditation_hr.csv.gz"
)

// DataFiles are the files the experiments read, with their sha256.
var DataFiles = map[string]string{
	fileHAR:   "9d01d5214dd873aadfee38320ee00e7efe1a480fdb46c80978591b3124561815",
	filePower: "bc4a5c82b2f8971adc272dde7be527747fb2d63195aa73abde4bdfc1d4bfa24a",
	fileWater: "8cf8548b15cf899451e87fd8815708b6f69b45a961e5535332eb3d93128265c2",
	fileHR:    "04740a169776a041883fb6376b8a3e87686841a65ac1627992fed673feac7d08",
}

// FindData returns the data directory: $PUFF_DATA when set, else the first
// directory named data holding the experiments' files in the working
// directory or one of its parents (the repository's data/ from anywhere
// inside the repository), else "data".
func FindData() string {
	if d := os.Getenv("PUFF_DATA"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	for err == nil {
		cand := filepath.Join(dir, "data")
		if _, e := os.Stat(filepath.Join(cand, fileHAR)); e == nil {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "data"
}

// readGzipCSV streams a gzip-compressed CSV with the given header, calling
// fn for every data row with its 1-based line number. Errors name the file
// and line: absent file, truncated or corrupt gzip, wrong header, wrong
// number of fields.
func readGzipCSV(dir, name string, header []string, fn func(line int, rec []string) error) error {
	path := filepath.Join(dir, name)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: not found (give the data directory with --data or $PUFF_DATA; the files are described in the repository's data/README.md)", path)
		}
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: not a gzip file: %v", path, err)
	}
	r := csv.NewReader(gz)
	r.FieldsPerRecord = len(header)
	r.ReuseRecord = true
	line := 0
	for {
		rec, err := r.Read()
		line++
		if err == io.EOF {
			if line == 1 {
				return fmt.Errorf("%s: empty file", path)
			}
			return nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) {
				return fmt.Errorf("%s: line %d: file is truncated or corrupt (%v)", path, line, err)
			}
			return fmt.Errorf("%s: line %d: %v", path, line, err)
		}
		if line == 1 {
			if strings.Join(rec, ",") != strings.Join(header, ",") {
				return fmt.Errorf("%s: line 1: header %q, want %q", path, strings.Join(rec, ","), strings.Join(header, ","))
			}
			continue
		}
		if err := fn(line, rec); err != nil {
			return fmt.Errorf("%s: line %d: %w", path, line, err)
		}
	}
}

// Activity names of the UCI HAR labels 1..6.
var activityNames = []string{"walking", "upstairs", "downstairs", "sitting", "standing", "laying"}

// person is one subject's activity sequence.
type person struct {
	id, split string
	seq       []int
}

// loadHAR reads the activity label sequences, one per subject in recording
// order.
func loadHAR(dir string) ([]person, error) {
	idx := map[string]int{}
	var out []person
	err := readGzipCSV(dir, fileHAR, []string{"split", "row", "subject", "activity_id", "activity"}, func(_ int, rec []string) error {
		a, err := strconv.Atoi(rec[3])
		if err != nil || a < 1 || a > 6 {
			return fmt.Errorf("activity_id %q is not 1..6", rec[3])
		}
		i, ok := idx[rec[2]]
		if !ok {
			i = len(out)
			idx[rec[2]] = i
			out = append(out, person{id: rec[2], split: rec[0]})
		}
		out[i].seq = append(out[i].seq, a-1)
		return nil
	})
	return out, err
}

// loadPower reads Global_active_power (kW) by minute index; rows with "?"
// and jumps in the index end a segment (missing minutes split the series).
func loadPower(dir string) ([][]float64, error) {
	var segs [][]float64
	var cur []float64
	prev := -1
	err := readGzipCSV(dir, filePower, []string{"index", "Date", "Time", "Global_active_power", "Global_reactive_power", "Voltage", "Global_intensity", "Sub_metering_1", "Sub_metering_2", "Sub_metering_3"}, func(_ int, rec []string) error {
		i, err := strconv.Atoi(rec[0])
		if err != nil {
			return fmt.Errorf("index %q is not an integer", rec[0])
		}
		if rec[3] == "?" || (prev >= 0 && i != prev+1) {
			if len(cur) > 0 {
				segs = append(segs, cur)
			}
			cur = nil
		}
		prev = i
		if rec[3] == "?" {
			return nil
		}
		v, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("Global_active_power %q is not a non-negative number", rec[3])
		}
		cur = append(cur, v)
		return nil
	})
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs, err
}

// loadWater reads avg_rate per minute; a timestamp step other than 60 s
// ends a segment.
func loadWater(dir string) ([][]float64, error) {
	var segs [][]float64
	var cur []float64
	var prev int64 = -1
	err := readGzipCSV(dir, fileWater, []string{"unix_ts", "counter", "avg_rate", "inst_rate"}, func(_ int, rec []string) error {
		ts, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil {
			return fmt.Errorf("unix_ts %q is not an integer", rec[0])
		}
		if prev >= 0 && ts != prev+60 && len(cur) > 0 {
			segs = append(segs, cur)
			cur = nil
		}
		prev = ts
		v, err := strconv.ParseFloat(rec[2], 64)
		if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("avg_rate %q is not a non-negative number", rec[2])
		}
		cur = append(cur, v)
		return nil
	})
	if len(cur) > 0 {
		segs = append(segs, cur)
	}
	return segs, err
}

// loadHR reads one record's heart rate (bpm) in time order.
func loadHR(dir, record string) ([]float64, error) {
	var out []float64
	err := readGzipCSV(dir, fileHR, []string{"group", "record", "time_s", "hr_bpm"}, func(_ int, rec []string) error {
		if rec[1] != record {
			return nil
		}
		v, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("hr_bpm %q is not a positive number", rec[3])
		}
		out = append(out, v)
		return nil
	})
	if err == nil && len(out) == 0 {
		return nil, fmt.Errorf("%s: no rows for record %q", filepath.Join(dir, fileHR), record)
	}
	return out, err
}

// levels discretises segments into k equal-width levels over [0, max]
// (the maximum falls in the top level; nothing is clipped). It returns the
// sequences and the level width.
func levels(segs [][]float64, k int) ([][]int, float64) {
	mx := 0.0
	for _, s := range segs {
		for _, v := range s {
			mx = max(mx, v)
		}
	}
	width := mx / float64(k)
	if width == 0 {
		width = 1
	}
	out := make([][]int, len(segs))
	for i, s := range segs {
		out[i] = make([]int, len(s))
		for j, v := range s {
			out[i][j] = min(int(v/width), k-1)
		}
	}
	return out, width
}
