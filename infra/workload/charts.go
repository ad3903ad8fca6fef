package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// mark is a labelled value on a chart's x axis.
type mark struct {
	Label string
	At    float64
}

// histogram draws the counts of values (milliseconds, above 0) in bins of equal width on a
// logarithmic axis from the smallest value's power of ten to the largest value, so that the
// tail up to the maximum shows beside the bulk; the count of each bin beyond the last mark
// but one (p99 before max) is written above it, and each mark is a line of its own colour
// and dash.
func histogram(title, xLabel string, values []float64, bins int, marks []mark) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight}
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = max(hi*1.0001, lo*10)
	span := math.Log10(hi) - math.Log10(lo)
	at := func(v float64) float64 { return math.Log10(max(v, lo)) - math.Log10(lo) } // axis position
	counts := make([]float64, bins)
	for _, v := range values {
		counts[min(int(at(v)/span*float64(bins)), bins-1)]++
	}
	yMax := 0.0
	for _, n := range counts {
		yMax = max(yMax, n)
	}
	p := newPlot(span, niceCeil(yMax))
	var ticks []float64
	for t := lo; t <= hi; t *= 10 {
		ticks = append(ticks, at(t))
		if t*3 <= hi {
			ticks = append(ticks, at(t*3))
		}
	}
	p.axes(&c, xLabel+" (logarithmic axis)", "count", ticks, func(x float64) string {
		return num(roundSig(lo * math.Pow(10, x)))
	}, intLabel)
	tailFrom := math.Inf(1)
	if len(marks) >= 2 {
		tailFrom = marks[len(marks)-2].At
	}
	w := span / float64(bins)
	for i, n := range counts {
		if n == 0 {
			continue
		}
		x0, x1 := p.x(float64(i)*w), p.x(float64(i+1)*w)
		from, to := lo*math.Pow(10, float64(i)*w), lo*math.Pow(10, float64(i+1)*w)
		h := max(p.y(0)-p.y(n), 2) // a bin of one stays visible beside thousands
		c.Rects = append(c.Rects, rect{x0 + 0.5, p.y(0) - h, max(x1-x0-1, 1), h, "#6b8fb5",
			fmt.Sprintf("%s–%s ms: %d", num(roundSig(from)), num(roundSig(to)), int(n))})
		if to > tailFrom {
			c.Texts = append(c.Texts, text{X: (x0 + x1) / 2, Y: p.y(0) - h - 3, Anchor: "middle", Body: intLabel(n), Fill: "#333"})
		}
	}
	var legend []legendEntry
	for i, m := range marks {
		x := p.x(at(m.At))
		c.Lines = append(c.Lines, line{x, p.top, x, p.top + p.height, colour(i + 1), dash(i + 1)})
		legend = append(legend, legendEntry{Name: fmt.Sprintf("%s %s ms", m.Label, strconv.FormatFloat(m.At, 'f', 1, 64)),
			Series: i + 1, Line: true})
	}
	p.legend(&c, legend)
	return c
}

// roundSig rounds v to two significant digits, for axis labels.
func roundSig(v float64) float64 {
	if v == 0 {
		return 0
	}
	e := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-1)
	return math.Round(v/e) * e
}

// series is a named line of (x, y) points.
type series struct {
	Name string
	X, Y []float64
}

// lines draws series as polylines over a shared x axis, each with its colour, dash and markers
// (about twenty per series, shifted per series so that they do not cover each other).
func lines(title, xLabel, yLabel string, ss []series) chart {
	c := chart{Title: title, Width: chartWidth, Height: chartHeight}
	xMax, yMax := 0.0, 0.0
	for _, s := range ss {
		for i := range s.X {
			xMax, yMax = max(xMax, s.X[i]), max(yMax, s.Y[i])
		}
	}
	p := newPlot(niceCeil(xMax), niceCeil(yMax))
	p.axes(&c, xLabel, yLabel, fifths(p.xMax), intLabel, intLabel)
	var legend []legendEntry
	for i, s := range ss {
		pts := make([]string, len(s.X))
		for j := range s.X {
			pts[j] = fmt.Sprintf("%.1f,%.1f", p.x(s.X[j]), p.y(s.Y[j]))
		}
		c.Polylines = append(c.Polylines, polyline{strings.Join(pts, " "), colour(i), dash(i)})
		every := max(len(s.X)/20, 1)
		for j := (i * every / max(len(ss), 1)) % every; j < len(s.X); j += every {
			c.Paths = append(c.Paths, path{marker(i, p.x(s.X[j]), p.y(s.Y[j])), colour(i),
				fmt.Sprintf("%s: %s at %s", s.Name, num(s.Y[j]), num(s.X[j]))})
		}
		legend = append(legend, legendEntry{Name: s.Name, Series: i, Line: true})
	}
	p.legend(&c, legend)
	return c
}

// barRow is one horizontal bar: its group (a consumer; "" for none), label, value and colour.
type barRow struct {
	Group, Label string
	Value        float64
	Series       int  // colour index
	Emphasis     bool // its value in bold (the figure the chart is about)
}

// hbars draws one horizontal bar per row, grouped under their groups' names, on a logarithmic
// scale (0, then 1, 10, 100, … a step apart) so that a bar of 3 shows beside one of 10,000;
// each value is written at the end of its bar, a zero as "0" at the axis.
func hbars(id, title string, rows []barRow, legend []legendEntry) chart {
	const rowH, groupH, top, labelW, valueW = 20.0, 24.0, 40.0, 300.0, 90.0
	c := chart{ID: id, Title: title, Width: chartWidth}
	vMax := 1.0
	for _, r := range rows {
		vMax = max(vMax, r.Value)
	}
	steps := math.Ceil(math.Log10(vMax)) + 1 // 0 to 1, then one per power of ten
	width := chartWidth - labelW - valueW - legendWidth
	scale := func(v float64) float64 {
		if v <= 0 {
			return 0
		}
		return (1 + math.Log10(v)) / steps * width
	}
	y, group := top, ""
	for _, r := range rows {
		if r.Group != group {
			group = r.Group
			c.Texts = append(c.Texts, text{X: 0, Y: y + 18, Anchor: "start", Body: r.Group, Fill: "#222", Bold: true})
			y += groupH
		}
		w := scale(r.Value)
		c.Texts = append(c.Texts, text{X: labelW - 8, Y: y + 14, Anchor: "end", Body: r.Label, Fill: "#333"},
			text{X: labelW + w + 6, Y: y + 14, Anchor: "start", Body: num(r.Value), Fill: "#222", Bold: r.Emphasis})
		c.Rects = append(c.Rects, rect{labelW, y + 3, max(w, 1.5), rowH - 6, colour(r.Series),
			fmt.Sprintf("%s %s: %s", r.Group, r.Label, num(r.Value))})
		y += rowH
	}
	c.Lines = append(c.Lines, line{labelW, top, labelW, y, "#333", ""}, line{labelW, y, labelW + width, y, "#333", ""})
	for i := 0.0; i <= steps; i++ {
		v := 0.0
		if i > 0 {
			v = math.Pow(10, i-1)
		}
		x := labelW + scale(v)
		c.Lines = append(c.Lines, line{x, top, x, y, "#e4e4e4", ""})
		c.Texts = append(c.Texts, text{X: x, Y: y + 16, Anchor: "middle", Body: num(v), Fill: "#555"})
	}
	c.Texts = append(c.Texts, text{X: labelW + width/2, Y: y + 32, Anchor: "middle",
		Body: "count, logarithmic axis: 0, then 1, 10, 100, … one step apart", Fill: "#555"})
	p := plot{left: labelW, top: top - 30, width: width + valueW}
	p.legend(&c, legend)
	c.Height = max(y+40, p.top+14+float64(len(legend))*20+10)
	return c
}
