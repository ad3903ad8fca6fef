package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// chart is an SVG drawing: the page's one template draws any chart from these shapes, and the
// builders below compute them (plot area, axes, bars, lines, legends) from the data.
type chart struct {
	Title         string
	Width, Height float64
	Rects         []rect
	Lines         []line
	Polylines     []polyline
	Texts         []text
}

type rect struct {
	X, Y, W, H float64
	Fill, Tip  string
}

type line struct {
	X1, Y1, X2, Y2 float64
	Stroke         string
	Dashed         bool
}

type polyline struct {
	Points, Stroke string
}

type text struct {
	X, Y   float64
	Anchor string // start, middle or end
	Body   string
	Fill   string
}

// palette colours the series of a chart, in order.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

func colour(i int) string { return palette[i%len(palette)] }

// plot is the drawing area of a chart with axes, in SVG coordinates.
type plot struct {
	left, top, width, height float64
	xMax, yMax               float64
}

const (
	chartWidth  = 760
	chartHeight = 280
)

func newPlot(xMax, yMax float64) plot {
	return plot{left: 60, top: 44, width: chartWidth - 60 - 180, height: chartHeight - 44 - 40,
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

// axes draws the frame, five ticks on each axis with their labels, and the axis titles.
func (p plot) axes(c *chart, xLabel, yLabel string, xTick, yTick func(float64) string) {
	c.Lines = append(c.Lines, line{p.left, p.top + p.height, p.left + p.width, p.top + p.height, "#333", false},
		line{p.left, p.top, p.left, p.top + p.height, "#333", false})
	for i := 0; i <= 5; i++ {
		xv, yv := p.xMax*float64(i)/5, p.yMax*float64(i)/5
		c.Lines = append(c.Lines, line{p.left, p.y(yv), p.left + p.width, p.y(yv), "#ddd", false})
		c.Texts = append(c.Texts, text{p.x(xv), p.top + p.height + 16, "middle", xTick(xv), "#333"},
			text{p.left - 6, p.y(yv) + 4, "end", yTick(yv), "#333"})
	}
	c.Texts = append(c.Texts, text{p.left + p.width/2, chartHeight - 4, "middle", xLabel, "#333"},
		text{p.left - 6, p.top - 14, "start", yLabel, "#333"})
}

// legend lists names with their colours right of the plot.
func (p plot) legend(c *chart, names []string) {
	for i, n := range names {
		y := p.top + 14 + float64(i)*18
		c.Rects = append(c.Rects, rect{p.left + p.width + 16, y - 9, 10, 10, colour(i), n})
		c.Texts = append(c.Texts, text{p.left + p.width + 30, y, "start", n, "#333"})
	}
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// histogram draws the counts of values (milliseconds) in bins equal bins up to upTo, the
// values above it in the last bin, with a dashed line at each mark.
func histogram(title string, values []float64, upTo float64, bins int, marks []mark) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight}
	top := 0.0
	for _, v := range values {
		top = max(top, v)
	}
	xMax, above := niceCeil(min(top, upTo)), 0
	for _, v := range values {
		if v >= xMax {
			above++
		}
	}
	if top > xMax {
		c.Texts = append(c.Texts, text{chartWidth - 180 + 16, chartHeight - 44, "start",
			fmt.Sprintf("%d at ≥ %s ms (last bin)", above, num(xMax)), "#333"})
	}
	counts := make([]float64, bins)
	for _, v := range values {
		counts[min(int(v/xMax*float64(bins)), bins-1)]++
	}
	yMax := 0.0
	for _, n := range counts {
		yMax = max(yMax, n)
	}
	p := newPlot(xMax, niceCeil(yMax))
	p.axes(&c, "milliseconds from API acceptance to consumer commit", "commits", func(v float64) string { return num(v) }, intLabel)
	w := xMax / float64(bins)
	for i, n := range counts {
		lo := float64(i) * w
		c.Rects = append(c.Rects, rect{p.x(lo) + 1, p.y(n), max(p.x(lo+w)-p.x(lo)-2, 1), p.y(0) - p.y(n), colour(0),
			fmt.Sprintf("%s–%s ms: %d", num(lo), num(lo+w), int(n))})
	}
	for i, m := range marks {
		x := p.x(min(m.At, xMax))
		c.Lines = append(c.Lines, line{x, p.top, x, p.top + p.height, colour(i + 1), true})
		c.Texts = append(c.Texts, text{p.left + p.width + 16, p.top + 14 + float64(i)*18, "start",
			fmt.Sprintf("%s %s ms", m.Label, strconv.FormatFloat(m.At, 'f', 1, 64)), colour(i + 1)})
	}
	return c
}

// mark is a labelled value on a chart's x axis.
type mark struct {
	Label string
	At    float64
}

func intLabel(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// series is a named line of (x, y) points.
type series struct {
	Name string
	X, Y []float64
}

// lines draws series as polylines over a shared x axis.
func lines(title, xLabel, yLabel string, ss []series) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight}
	xMax, yMax := 0.0, 0.0
	for _, s := range ss {
		for i := range s.X {
			xMax, yMax = max(xMax, s.X[i]), max(yMax, s.Y[i])
		}
	}
	p := newPlot(niceCeil(xMax), niceCeil(yMax))
	p.axes(&c, xLabel, yLabel, intLabel, intLabel)
	var names []string
	for i, s := range ss {
		pts := make([]string, len(s.X))
		for j := range s.X {
			pts[j] = fmt.Sprintf("%.1f,%.1f", p.x(s.X[j]), p.y(s.Y[j]))
		}
		c.Polylines = append(c.Polylines, polyline{strings.Join(pts, " "), colour(i)})
		names = append(names, s.Name)
	}
	p.legend(&c, names)
	return c
}

// group is one cluster of bars: a label and one value per category.
type group struct {
	Label  string
	Values []float64
}

// groupedBars draws one cluster of bars per group, one bar per category, with its value above.
func groupedBars(title, yLabel string, categories []string, groups []group) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight}
	yMax := 0.0
	for _, g := range groups {
		for _, v := range g.Values {
			yMax = max(yMax, v)
		}
	}
	p := newPlot(float64(max(len(groups), 1)), niceCeil(yMax))
	p.axes(&c, "", yLabel, func(float64) string { return "" }, intLabel)
	slot := p.width / float64(max(len(groups), 1))
	bar := (slot - 20) / float64(max(len(categories), 1))
	for gi, g := range groups {
		x0 := p.left + float64(gi)*slot + 10
		c.Texts = append(c.Texts, text{x0 + (slot-20)/2, p.top + p.height + 16, "middle", g.Label, "#333"})
		for ci, v := range g.Values {
			x := x0 + float64(ci)*bar
			c.Rects = append(c.Rects, rect{x, p.y(v), max(bar-2, 1), p.y(0) - p.y(v), colour(ci),
				fmt.Sprintf("%s %s: %s", g.Label, categories[ci], num(v))})
			if v > 0 {
				c.Texts = append(c.Texts, text{x + bar/2, p.y(v) - 3, "middle", num(v), "#333"})
			}
		}
	}
	p.legend(&c, categories)
	return c
}

// bars draws one horizontal bar per label, its value at its end.
func bars(title string, labels []string, values []float64) chart {
	rowH := 22.0
	c := chart{Title: title, Width: chartWidth, Height: 20 + rowH*float64(len(labels)) + 10}
	yMax := 0.0
	for _, v := range values {
		yMax = max(yMax, v)
	}
	left, width := 330.0, chartWidth-330.0-70
	scale := niceCeil(yMax)
	for i, l := range labels {
		y := 20 + rowH*float64(i)
		w := values[i] / scale * width
		c.Texts = append(c.Texts, text{left - 8, y + 14, "end", l, "#333"},
			text{left + w + 6, y + 14, "start", num(values[i]), "#333"})
		c.Rects = append(c.Rects, rect{left, y + 3, max(w, 1), rowH - 6, colour(i), fmt.Sprintf("%s: %s", l, num(values[i]))})
	}
	c.Lines = append(c.Lines, line{left, 20, left, 20 + rowH*float64(len(labels)), "#333", false})
	return c
}
