package workload

import (
	"fmt"
	"math"
	"strconv"
)

// chart is an SVG drawing: the page's one template draws any chart from these shapes, and the
// builders in charts.go compute them (plot area, axes, bars, lines, legends) from the data.
// Every chart is drawn chartWidth wide and scaled by the page to the width of its column.
type chart struct {
	ID            string // the figure's element id, "" for none
	Title         string
	Width, Height float64
	Rects         []rect
	Lines         []line
	Polylines     []polyline
	Paths         []path
	Texts         []text
}

type rect struct {
	X, Y, W, H float64
	Fill, Tip  string
}

type line struct {
	X1, Y1, X2, Y2 float64
	Stroke         string
	Dash           string // stroke-dasharray, "" for solid
}

type polyline struct {
	Points, Stroke, Dash string
}

// path is a marker or any other outline: SVG path data, filled.
type path struct {
	D, Fill, Tip string
}

type text struct {
	X, Y   float64
	Anchor string // start, middle or end
	Body   string
	Fill   string
	Bold   bool
}

// A series is told apart by three things at once, so that it reads without colour too: its
// colour, its dash pattern and its marker shape.
var (
	palette = []string{"#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#555555"}
	dashes  = []string{"", "9 4", "2 3", "12 3 3 3", "6 2", "1 5"}
	shapes  = []string{"circle", "square", "triangle", "diamond"}
)

func colour(i int) string { return palette[i%len(palette)] }
func dash(i int) string   { return dashes[i%len(dashes)] }

// marker returns the path of series i's marker shape, centred on (x, y).
func marker(i int, x, y float64) string {
	const r = 4.0
	switch shapes[i%len(shapes)] {
	case "square":
		return fmt.Sprintf("M%.1f,%.1f h%.1f v%.1f h%.1f z", x-r, y-r, 2*r, 2*r, -2*r)
	case "triangle":
		return fmt.Sprintf("M%.1f,%.1f l%.1f,%.1f h%.1f z", x, y-r-1, r+1, 2*r+1, -2*r-2)
	case "diamond":
		return fmt.Sprintf("M%.1f,%.1f l%.1f,%.1f l%.1f,%.1f l%.1f,%.1f z", x, y-r-1, r+1, r+1, -r-1, r+1, -r-1, -r-1)
	}
	return fmt.Sprintf("M%.1f,%.1f a%.1f,%.1f 0 1,0 %.1f,0 a%.1f,%.1f 0 1,0 %.1f,0", x-r, y, r, r, 2*r, r, r, -2*r)
}

// plot is the drawing area of a chart with axes, in SVG coordinates.
type plot struct {
	left, top, width, height float64
	xMax, yMax               float64
}

const (
	chartWidth  = 1160
	chartHeight = 300
	legendWidth = 230
)

func newPlot(xMax, yMax float64) plot {
	return plot{left: 60, top: 44, width: chartWidth - 60 - legendWidth, height: chartHeight - 44 - 40,
		xMax: max(xMax, 1e-9), yMax: max(yMax, 1e-9)}
}

func (p plot) x(v float64) float64 { return p.left + v/p.xMax*p.width }
func (p plot) y(v float64) float64 { return p.top + p.height - v/p.yMax*p.height }

// niceCeil rounds v up to a round number: 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power
// of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if v <= m*e {
			return m * e
		}
	}
	return 10 * e
}

// axes draws the frame, five ticks on the y axis and the x ticks xTicks with their labels, and
// the axis titles.
func (p plot) axes(c *chart, xLabel, yLabel string, xTicks []float64, xTick, yTick func(float64) string) {
	c.Lines = append(c.Lines, line{p.left, p.top + p.height, p.left + p.width, p.top + p.height, "#333", ""},
		line{p.left, p.top, p.left, p.top + p.height, "#333", ""})
	for i := 0; i <= 5; i++ {
		yv := p.yMax * float64(i) / 5
		c.Lines = append(c.Lines, line{p.left, p.y(yv), p.left + p.width, p.y(yv), "#e4e4e4", ""})
		c.Texts = append(c.Texts, text{X: p.left - 6, Y: p.y(yv) + 4, Anchor: "end", Body: yTick(yv), Fill: "#333"})
	}
	for _, xv := range xTicks {
		c.Texts = append(c.Texts, text{X: p.x(xv), Y: p.top + p.height + 16, Anchor: "middle", Body: xTick(xv), Fill: "#333"})
	}
	c.Texts = append(c.Texts, text{X: p.left + p.width/2, Y: chartHeight - 4, Anchor: "middle", Body: xLabel, Fill: "#333"},
		text{X: p.left - 6, Y: p.top - 14, Anchor: "start", Body: yLabel, Fill: "#333"})
}

// fifths returns 0, xMax/5, ..., xMax.
func fifths(xMax float64) []float64 {
	out := make([]float64, 6)
	for i := range out {
		out[i] = xMax * float64(i) / 5
	}
	return out
}

// legendEntry is one line of a legend: its name and how its series is drawn.
type legendEntry struct {
	Name   string
	Series int  // index for colour, dash and marker
	Line   bool // drawn as a line with its dash and marker, else as a filled swatch
	Colour string
}

// legend lists entries right of the plot.
func (p plot) legend(c *chart, entries []legendEntry) {
	x := p.left + p.width + 16
	for i, e := range entries {
		y := p.top + 14 + float64(i)*20
		col := e.Colour
		if col == "" {
			col = colour(e.Series)
		}
		if e.Line {
			c.Lines = append(c.Lines, line{x, y - 4, x + 28, y - 4, col, dash(e.Series)})
			c.Paths = append(c.Paths, path{marker(e.Series, x+14, y-4), col, e.Name})
		} else {
			c.Rects = append(c.Rects, rect{x + 8, y - 10, 12, 12, col, e.Name})
		}
		c.Texts = append(c.Texts, text{X: x + 36, Y: y, Anchor: "start", Body: e.Name, Fill: "#333"})
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func intLabel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
