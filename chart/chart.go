// Package chart draws the toolkit's figures with gonum/plot: the format
// (PNG, SVG or PDF) follows the file name's extension.
package chart

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Status colours a point of a region map.
type Status int

// The statuses a region map distinguishes.
const (
	Holds Status = iota
	Violated
	Undecided
)

var statusStyle = []struct {
	name  string
	color color.RGBA
	shape draw.GlyphDrawer
}{
	{"holds", color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}, draw.CircleGlyph{}},
	{"violated", color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}, draw.CrossGlyph{}},
	{"undecided", color.RGBA{R: 0x75, G: 0x70, B: 0xb3, A: 0xff}, draw.TriangleGlyph{}},
}

// CheckPath refuses file names whose extension gonum/plot cannot write;
// callers check before long computations.
func CheckPath(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg", ".pdf":
		return nil
	}
	return fmt.Errorf("chart: %s: the file name must end in .png, .svg or .pdf", path)
}

// Curve plots y against x (a privacy loss over a parameter) with a dashed
// horizontal line at the level ε, and marks each point by its status.
func Curve(path, title, xLabel, yLabel string, x, y []float64, status []Status, level float64) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	var line plotter.XYs // infinite losses have no point on the curve
	for i := range x {
		if !isInf(y[i]) {
			line = append(line, plotter.XY{X: x[i], Y: y[i]})
		}
	}
	if len(line) > 0 {
		l, err := plotter.NewLine(line)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		p.Add(l)
	}
	if err := addStatus(p, x, y, status); err != nil {
		return err
	}
	eps := plotter.NewFunction(func(float64) float64 { return level })
	eps.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(eps)
	p.Legend.Add(fmt.Sprintf("ε = %.4g", level), eps)
	p.Legend.Top = true
	return save(p, path)
}

// Region plots a two-parameter grid, one marker per point by status.
func Region(path, title, xLabel, yLabel string, x, y []float64, status []Status) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	if err := addStatus(p, x, y, status); err != nil {
		return err
	}
	p.Legend.Top = true
	return save(p, path)
}

func addStatus(p *plot.Plot, x, y []float64, status []Status) error {
	for s, st := range statusStyle {
		var pts plotter.XYs
		for i := range x {
			if int(status[i]) == s && !isInf(y[i]) {
				pts = append(pts, plotter.XY{X: x[i], Y: y[i]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		sc.GlyphStyle.Color = st.color
		sc.GlyphStyle.Shape = st.shape
		sc.GlyphStyle.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add(st.name, sc)
	}
	return nil
}

func isInf(v float64) bool { return v > 1e308 || v < -1e308 }

func save(p *plot.Plot, path string) error {
	if err := p.Save(6*vg.Inch, 4*vg.Inch, path); err != nil {
		return fmt.Errorf("chart: %s: %w", path, err)
	}
	return nil
}

// Series is one named line of a Lines chart. NaN or infinite Y values are
// gaps (for example where a mechanism does not apply).
type Series struct {
	Name string
	X, Y []float64
}

var palette = []color.RGBA{
	{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}, {R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}, {R: 0x75, G: 0x70, B: 0xb3, A: 0xff},
	{R: 0xe7, G: 0x29, B: 0x8a, A: 0xff}, {R: 0x66, G: 0xa6, B: 0x1e, A: 0xff}, {R: 0xa6, G: 0x76, B: 0x1d, A: 0xff},
}

// Lines draws several series with markers; logY puts the Y axis on a log
// scale (non-positive values are then gaps too).
func Lines(path, title, xLabel, yLabel string, series []Series, logY bool) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	for i, s := range series {
		var pts plotter.XYs
		for j := range s.X {
			y := s.Y[j]
			if y != y || isInf(y) || (logY && y <= 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: s.X[j], Y: y})
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		c := palette[i%len(palette)]
		l.Color, sc.Color = c, c
		sc.Shape = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}}[i%6]
		p.Add(l, sc)
		p.Legend.Add(s.Name, l, sc)
	}
	p.Legend.Top = true
	if !logY && len(series) > 3 {
		// Headroom so the legend (top right) does not cover the lines.
		p.Y.Max += 0.12 * float64(len(series)) * (p.Y.Max - p.Y.Min)
	}
	return save(p, path)
}

// Categories draws a map of points coloured by category (names[cat[i]]),
// as filled squares: a heat map for a grid of parameter values.
func Categories(path, title, xLabel, yLabel string, x, y []float64, cat []int, names []string, size vg.Length) error {
	if err := CheckPath(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text, p.X.Label.Text, p.Y.Label.Text = title, xLabel, yLabel
	for c, name := range names {
		var pts plotter.XYs
		for i := range x {
			if cat[i] == c {
				pts = append(pts, plotter.XY{X: x[i], Y: y[i]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		sc.GlyphStyle.Color = palette[c%len(palette)]
		sc.GlyphStyle.Shape = draw.BoxGlyph{}
		sc.GlyphStyle.Radius = size
		p.Add(sc)
		p.Legend.Add(name, sc)
	}
	p.Legend.Top = true
	return save(p, path)
}
