package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// WarpDiagram draws one warp-wide memory instruction: the warp's 32 lanes
// across the top, each with the byte address it accesses written below
// it; under them the 128-byte lines the warp touches, each cut into its
// four 32-byte sectors, every sector filled by how many of its bytes the
// warp uses (UsedColor, and "u/32 B" written in it where it fits; white:
// not fetched); and a line from each lane to the bytes it accesses. Lines
// the warp does not touch are left out and a break (//) marks each jump
// over them, so 32 lines far apart stay readable. A warp built by hand
// belongs to no buffer and is drawn as a load: its addresses are plain
// byte addresses and its sectors "fetched". title heads the picture.
// Draw it at the Diagram size.
func WarpDiagram(w sectors.Warp, title string) (*plot.Plot, error) {
	return warpDiagram(Instruction{Op: "load", Warp: w}, title)
}

func warpDiagram(in Instruction, title string) (*plot.Plot, error) {
	acc, err := sectors.Coalesce(in.Warp)
	if err != nil {
		return nil, wrap(err)
	}
	d := &warpDrawing{w: in.Warp, acc: acc, buffer: in.Buffer, moved: "fetched"}
	if in.Op == "store" {
		d.moved = "written"
	}
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontOf(TitleFontSize)
	p.Title.Padding = vg.Points(4)
	p.HideAxes()
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(d)
	return p, nil
}

// InstructionDiagram draws instruction instr of warp w of the launch s
// (see Instructions) as WarpDiagram does, titled with the kernel, the
// warp's threads and the statement, the addresses counted from the start
// of the instruction's buffer (in[], out[], idx[], p[], x[]), a store's
// sectors "written" where a load's are "fetched". instr counts from 0, as
// Instructions' indices do; the title, for a reader, counts from 1:
// instr 0 of a copy is "instruction 1 of 2: load in[t]".
func InstructionDiagram(s spec.Spec, w int64, instr int) (*plot.Plot, error) {
	ins, err := Instructions(s, w)
	if err != nil {
		return nil, err
	}
	in, err := pick(ins, s, w, instr)
	if err != nil {
		return nil, err
	}
	t0, lanes := FirstThread(s, w)
	title := fmt.Sprintf("%s — warp %d (threads %d–%d), instruction %d of %d: %s",
		s.Brief(spec.FieldN), w, t0, t0+int64(lanes)-1, instr+1, len(ins), in)
	return warpDiagram(in, title)
}

// warpDrawing is the plotter behind WarpDiagram: it draws in the plot's
// whole data area, in points, not in data coordinates.
type warpDrawing struct {
	w   sectors.Warp
	acc sectors.Access
	// buffer names the allocation the addresses count from; empty for a
	// warp built by hand, whose addresses are plain byte addresses.
	buffer string
	// moved is what the instruction does to a sector: a load's are
	// "fetched", a store's "written".
	moved string
}

var _ plot.Plotter = (*warpDrawing)(nil)

// Geometry of the diagram, in points.
const (
	diagFont   = 11
	bandHeight = 38
	arrowLen   = 6
	// byteMapHeight is the strip above the sectors that marks each byte
	// a lane accesses.
	byteMapHeight = 7
	legendHeight  = 18
)

func style(size vg.Length, c color.Color) text.Style {
	return text.Style{Color: c, Font: fontOf(size), Handler: plot.DefaultTextHandler}
}

// bandLayout places the touched lines along the band: each line the same
// width, a break between lines that are not neighbours in memory.
type bandLayout struct {
	lines []uint64    // line addresses, ascending
	x     []vg.Length // left edge of each line
	gapL  []bool      // a break before line i (addresses skipped)
	lineW vg.Length
}

func layoutBand(lines []uint64, left, width vg.Length) bandLayout {
	b := bandLayout{lines: lines, x: make([]vg.Length, len(lines)), gapL: make([]bool, len(lines))}
	if len(lines) == 0 {
		return b
	}
	breaks, joins := 0, 0
	for i := 1; i < len(lines); i++ {
		if lines[i] == lines[i-1]+sectors.LineBytes {
			joins++
		} else {
			b.gapL[i] = true
			breaks++
		}
	}
	est := width / vg.Length(len(lines))
	gap := max(vg.Points(5), min(vg.Points(22), est/4))
	join := vg.Points(3)
	b.lineW = (width - vg.Length(breaks)*gap - vg.Length(joins)*join) / vg.Length(len(lines))
	x := left
	for i := range lines {
		if i > 0 {
			if b.gapL[i] {
				x += gap
			} else {
				x += join
			}
		}
		b.x[i] = x
		x += b.lineW
	}
	return b
}

// xOf returns where byte address a lies on the band.
func (b bandLayout) xOf(a float64) vg.Length {
	line := uint64(a) &^ (sectors.LineBytes - 1)
	i, ok := slices.BinarySearch(b.lines, line)
	if !ok {
		i = max(0, min(i, len(b.lines)-1))
		line = b.lines[i]
	}
	frac := (a - float64(line)) / sectors.LineBytes
	return b.x[i] + vg.Length(max(0, min(1, frac)))*b.lineW
}

func formatAddr(a uint64) string {
	if a < 1e10 {
		return strconv.FormatUint(a, 10)
	}
	return "0x" + strconv.FormatUint(a, 16)
}

func (d *warpDrawing) Plot(c draw.Canvas, _ *plot.Plot) {
	left, right := c.Min.X+vg.Points(4), c.Max.X-vg.Points(4)
	width := right - left
	small := style(diagFont, Black)
	grey := color.Gray{Y: 0x88}
	fh := small.FontExtents().Height

	// Header: what the rows are, wrapped to the width.
	active := bits.OnesCount32(d.w.Active)
	where := "the byte address it accesses"
	if d.buffer != "" {
		where = "the address it accesses, in bytes from the start of " + d.buffer + "[]"
	}
	header := wrapText(small, fmt.Sprintf("The warp's 32 lanes (%d active), each accessing %s; under each lane, %s:",
		active, words.Plural(int(d.w.Size), "byte"), where), width)
	y := c.Max.Y
	for _, l := range header {
		putLine(c, small, left, y-fh, l)
		y -= fh
	}
	y -= vg.Points(4)

	// Lanes.
	pitch := width / sectors.WarpSize
	r := min(pitch/2-vg.Points(1.5), vg.Points(10))
	laneY := y - r
	laneX := func(l int) vg.Length { return left + (vg.Length(l)+0.5)*pitch }
	num := small
	num.XAlign, num.YAlign = draw.XCenter, draw.YCenter
	for l := range sectors.WarpSize {
		on := d.w.Active&(1<<l) != 0
		ctr := vg.Point{X: laneX(l), Y: laneY}
		circle := circlePath(ctr, r)
		if on {
			c.SetColor(color.Gray{Y: 0xe8})
			c.Fill(circle)
			c.SetLineStyle(draw.LineStyle{Color: Black, Width: vg.Points(0.8)})
		} else {
			c.SetLineStyle(draw.LineStyle{Color: grey, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(2), vg.Points(2)}})
		}
		c.Stroke(circle)
		num.Color = Black
		if !on {
			num.Color = grey
		}
		c.FillText(num, ctr, strconv.Itoa(l))
	}

	// Addresses, written downwards under each lane.
	addr := small
	addr.Rotation = math.Pi / 2
	addr.XAlign, addr.YAlign = draw.XRight, draw.YCenter
	var addrH vg.Length
	labels := make([]string, sectors.WarpSize)
	for l := range sectors.WarpSize {
		labels[l] = "off"
		if d.w.Active&(1<<l) != 0 {
			labels[l] = formatAddr(d.w.Addr[l])
		}
		addrH = max(addrH, addr.Width(labels[l]))
	}
	addrTop := laneY - r - vg.Points(3)
	for l := range sectors.WarpSize {
		addr.Color = Black
		if d.w.Active&(1<<l) == 0 {
			addr.Color = grey
		}
		c.FillText(addr, vg.Point{X: laneX(l), Y: addrTop}, labels[l])
	}
	connTop := addrTop - addrH - vg.Points(4)

	// From the bottom up: the text under the picture (caption, the bytes
	// used where the sectors are too narrow to say, summary), wrapped to
	// the width; the legend; the line labels; the band.
	lines := d.touchedLines()
	band := layoutBand(lines, left, width)
	caption := fmt.Sprintf("Boxes: the %s the warp touches, cut into 32-byte sectors; black above them: the bytes the lanes access.", words.Plural(len(lines), "128-byte line"))
	if slices.Contains(band.gapL, true) {
		caption = strings.TrimSuffix(caption, ".") + "; // skips lines no lane touches."
	}
	if len(lines) == 0 {
		caption = "No lane is active: the instruction sends nothing to memory."
	}
	text := wrapText(small, caption, width)
	if !d.usedFits(small, band.lineW/4) {
		text = append(text, wrapText(small, d.usage(), width)...)
	}
	text = append(text, wrapText(small, d.summary(), width)...)
	// The last line's descenders rest a point above the canvas's edge.
	bottom := c.Min.Y + vg.Points(1)
	for i := range text {
		putLine(c, small, left, bottom+vg.Length(len(text)-1-i)*fh, text[i])
	}
	legendY := bottom + vg.Length(len(text))*fh + vg.Points(6)
	under, rotate := band.labels(small)
	labH := fh
	if rotate {
		for _, l := range under {
			labH = max(labH, small.Width(l.text))
		}
	}
	labTop := legendY + legendHeight + vg.Points(10) + labH
	bandBottom := labTop + vg.Points(4)
	bandTop := bandBottom + bandHeight

	d.drawBand(c, band, bandBottom, bandTop)
	drawBandLabels(c, under, labTop, rotate)
	connBottom := bandTop + byteMapHeight

	// Lanes to bytes.
	conn := draw.LineStyle{Color: color.NRGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xb0}, Width: vg.Points(0.9)}
	for l := range sectors.WarpSize {
		if d.w.Active&(1<<l) == 0 {
			continue
		}
		x1 := band.xOf(float64(d.w.Addr[l]) + float64(d.w.Size)/2)
		x0 := laneX(l)
		c.StrokeLines(conn, []vg.Point{{X: x0, Y: connTop}, {X: x0, Y: connTop - vg.Points(4)}, {X: x1, Y: connBottom + arrowLen + vg.Points(10)}, {X: x1, Y: connBottom + arrowLen}})
		c.FillPolygon(conn.Color, []vg.Point{{X: x1 - vg.Points(3), Y: connBottom + arrowLen}, {X: x1 + vg.Points(3), Y: connBottom + arrowLen}, {X: x1, Y: connBottom + vg.Points(0.5)}})
	}

	d.drawLegend(c, left, width, legendY)
}

// putLine writes one line of text with its left end at x and the lowest
// point of its letters (the descenders of g, p, y) at bottom. gonum's
// YBottom puts the baseline Size − Ascent above the point, which leaves
// the descenders below it: the last line of a caption would be clipped.
func putLine(c draw.Canvas, sty text.Style, x, bottom vg.Length, s string) {
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YBottom
	e := sty.FontExtents()
	c.FillText(sty, vg.Point{X: x, Y: bottom + e.Ascent + e.Descent - sty.Font.Size}, s)
}

// wrapText breaks s into lines no wider than width, at spaces; a word
// wider than width stands alone on its line.
func wrapText(sty text.Style, s string, width vg.Length) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && sty.Width(line+" "+w) > width {
			out = append(out, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// usedLabel writes the bytes used of a sector: "4/32 B".
func usedLabel(u int) string { return fmt.Sprintf("%d/%d B", u, sectors.SectorBytes) }

// usedFits says whether every touched sector, secW wide, has room for its
// usedLabel.
func (d *warpDrawing) usedFits(sty text.Style, secW vg.Length) bool {
	for _, s := range d.acc.Sectors {
		if sty.Width(usedLabel(bits.OnesCount32(s.Used)))+vg.Points(6) > secW {
			return false
		}
	}
	return true
}

// usage says in words how many bytes of the touched sectors are used, for
// sectors too narrow to hold their label: "Bytes used of the 32 sectors
// fetched: 4/32 B in each." or "...: 4/32 B in 28, 8/32 B in 4."
func (d *warpDrawing) usage() string {
	count := map[int]int{}
	for _, s := range d.acc.Sectors {
		count[bits.OnesCount32(s.Used)]++
	}
	us := slices.Sorted(maps.Keys(count))
	head := fmt.Sprintf("Bytes used of the %s %s: ", words.Plural(len(d.acc.Sectors), "sector"), d.moved)
	if len(us) == 1 {
		return head + usedLabel(us[0]) + " in each."
	}
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = fmt.Sprintf("%s in %d", usedLabel(u), count[u])
	}
	return head + strings.Join(parts, ", ") + "."
}

// touchedLines returns the distinct lines of the warp's sectors, ascending.
func (d *warpDrawing) touchedLines() []uint64 {
	var lines []uint64
	for _, s := range d.acc.Sectors {
		if n := len(lines); n == 0 || lines[n-1] != s.Line() {
			lines = append(lines, s.Line())
		}
	}
	return lines
}

// usedMasks maps each touched sector's address to its byte mask.
func (d *warpDrawing) usedMasks() map[uint64]uint32 {
	used := make(map[uint64]uint32, len(d.acc.Sectors))
	for _, s := range d.acc.Sectors {
		used[s.Addr] = s.Used
	}
	return used
}

func (d *warpDrawing) drawBand(c draw.Canvas, b bandLayout, y0, y1 vg.Length) {
	used := d.usedMasks()
	small := style(diagFont, Black)
	small.XAlign, small.YAlign = draw.XCenter, draw.YCenter
	secW := b.lineW / 4
	sep := draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.6)}
	for i, line := range b.lines {
		for k := range 4 {
			x0 := b.x[i] + vg.Length(k)*secW
			rect := rectPath(x0, y0, x0+secW, y1)
			mask := used[line+uint64(k*sectors.SectorBytes)]
			u := bits.OnesCount32(mask)
			fill := UsedColor(u)
			// The byte map above the band: the bytes the lanes access.
			for j := 0; j < sectors.SectorBytes; {
				if mask&(1<<j) == 0 {
					j++
					continue
				}
				e := j
				for e < sectors.SectorBytes && mask&(1<<e) != 0 {
					e++
				}
				bx0 := x0 + secW*vg.Length(j)/sectors.SectorBytes
				bx1 := x0 + secW*vg.Length(e)/sectors.SectorBytes
				c.SetColor(Black)
				// A byte is 1/32 of a narrow sector: at least 1.5 points,
				// so that one float in a sector 5 points wide still shows.
				c.Fill(rectPath(bx0, y1+vg.Points(1), max(bx1, bx0+vg.Points(1.5)), y1+byteMapHeight))
				j = e
			}
			c.SetColor(fill)
			c.Fill(rect)
			if k > 0 {
				c.StrokeLine2(sep, x0, y0, x0, y1)
			}
			if u > 0 {
				// A dark edge: a sector of a few bytes is pale yellow,
				// and may be a few points wide.
				c.SetLineStyle(draw.LineStyle{Color: Black, Width: vg.Points(1)})
				c.Stroke(rectPath(x0+vg.Points(0.5), y0+vg.Points(0.5), x0+secW-vg.Points(0.5), y1-vg.Points(0.5)))
			}
			label := usedLabel(u)
			if u == 0 {
				label = "not " + d.moved
				if small.Width(label)+vg.Points(6) > secW {
					label = "—"
				}
			}
			if small.Width(label)+vg.Points(6) <= secW {
				small.Color = textOn(fill)
				if u == 0 {
					small.Color = color.Gray{Y: 0x77}
				}
				c.FillText(small, vg.Point{X: x0 + secW/2, Y: (y0 + y1) / 2}, label)
			}
		}
		c.SetLineStyle(draw.LineStyle{Color: Black, Width: vg.Points(1.2)})
		c.Stroke(rectPath(b.x[i], y0, b.x[i]+b.lineW, y1))
		c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 0xbb}, Width: vg.Points(0.6)}, b.x[i], y1+byteMapHeight, b.x[i]+b.lineW, y1+byteMapHeight)
		if b.gapL[i] {
			// A break: a dotted link and two slashes across it.
			xa, xb := b.x[i-1]+b.lineW, b.x[i]
			mid := (y0 + y1) / 2
			c.StrokeLine2(draw.LineStyle{Color: Black, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(1), vg.Points(1.5)}}, xa, mid, xb, mid)
			cx := (xa + xb) / 2
			h := vg.Points(5)
			sl := draw.LineStyle{Color: Black, Width: vg.Points(1)}
			for _, dx := range []vg.Length{-1.2, 1.2} {
				c.StrokeLine2(sl, cx+dx-h/3, mid-h, cx+dx+h/3, mid+h)
			}
		}
	}
}

// bandLabel is an address written under the band, at x.
type bandLabel struct {
	x    vg.Length
	text string
}

// labels returns the addresses to write under the band: every sector's
// first byte when the sectors are wide enough to write them across, else
// each line's first byte, upright, as many as fit side by side.
func (b bandLayout) labels(sty text.Style) (out []bandLabel, rotate bool) {
	secW := b.lineW / 4
	wide := true
	for _, line := range b.lines {
		if sty.Width(formatAddr(line+sectors.LineBytes))+vg.Points(6) > secW {
			wide = false
		}
	}
	if wide {
		for i, line := range b.lines {
			for k := range 4 {
				out = append(out, bandLabel{x: b.x[i] + vg.Length(k)*secW, text: formatAddr(line + uint64(k*sectors.SectorBytes))})
			}
		}
		return out, false
	}
	minGap := sty.FontExtents().Height + vg.Points(1)
	last := vg.Length(math.Inf(-1))
	for i, line := range b.lines {
		x := b.x[i] + b.lineW/2
		if x-last < minGap {
			continue
		}
		out = append(out, bandLabel{x: x, text: formatAddr(line)})
		last = x
	}
	return out, true
}

func drawBandLabels(c draw.Canvas, labels []bandLabel, top vg.Length, rotate bool) {
	sty := style(diagFont, Black)
	lo, hi := c.Min.X, c.Max.X
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YTop
	if rotate {
		sty.Rotation = math.Pi / 2
		sty.XAlign, sty.YAlign = draw.XRight, draw.YCenter
	}
	for _, l := range labels {
		x := l.x
		if !rotate {
			// A tick at the sector's first byte, the address under it.
			c.StrokeLine2(draw.LineStyle{Color: Black, Width: vg.Points(0.8)}, x, top+vg.Points(4), x, top+vg.Points(1))
			// Keep the address inside the picture.
			w := sty.Width(l.text)
			x = max(lo+w/2, min(hi-w/2, x))
		}
		c.FillText(sty, vg.Point{X: x, Y: top - vg.Points(1)}, l.text)
	}
}

// drawLegend writes the legend of the sector colours from left, at most
// width wide: the long form where it fits, shorter ones on a narrow
// picture.
func (d *warpDrawing) drawLegend(c draw.Canvas, left, width, y vg.Length) {
	sty := style(diagFont, Black)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	const boxW = 22
	forms := []struct {
		head string
		used []int
	}{
		{"Bytes used of each 32-byte sector:", []int{1, 4, 8, 16, 24, 32}},
		{"Bytes used:", []int{1, 4, 8, 16, 24, 32}},
		{"Bytes used:", []int{1, 8, 32}},
	}
	none := "0 (not " + d.moved + ")"
	form := forms[len(forms)-1]
	for _, f := range forms {
		w := sty.Width(f.head) + vg.Points(6) + vg.Points(boxW+3) + sty.Width(none) + vg.Points(6)
		for _, u := range f.used {
			w += vg.Points(boxW+3) + sty.Width(strconv.Itoa(u)) + vg.Points(6)
		}
		if w <= width {
			form = f
			break
		}
	}
	mid := y + legendHeight/2
	x := left
	put := func(s string) {
		c.FillText(sty, vg.Point{X: x, Y: mid}, s)
		x += sty.Width(s) + vg.Points(6)
	}
	box := func(u int) {
		rect := rectPath(x, y, x+vg.Points(boxW), y+legendHeight)
		c.SetColor(UsedColor(u))
		c.Fill(rect)
		c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.6)})
		if u > 0 {
			c.SetLineStyle(draw.LineStyle{Color: Black, Width: vg.Points(1)})
		}
		c.Stroke(rect)
		x += vg.Points(boxW + 3)
	}
	put(form.head)
	box(0)
	put(none)
	for _, u := range form.used {
		box(u)
		put(strconv.Itoa(u))
	}
}

func (d *warpDrawing) summary() string {
	a := d.acc
	if a.Requests == 0 {
		return "No request: 0 sectors " + d.moved + "."
	}
	return fmt.Sprintf("%s %s (%s B) in %s, for %s: efficiency %s.",
		words.Plural(len(a.Sectors), "sector"), d.moved, units.Count.Format(float64(a.FetchedBytes())), words.Plural(a.Lines, "line"),
		words.Plural(a.UsefulBytes, "useful byte"), units.Percent.Format(a.Efficiency()))
}

func rectPath(x0, y0, x1, y1 vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: x0, Y: y0})
	p.Line(vg.Point{X: x1, Y: y0})
	p.Line(vg.Point{X: x1, Y: y1})
	p.Line(vg.Point{X: x0, Y: y1})
	p.Close()
	return p
}

func circlePath(ctr vg.Point, r vg.Length) vg.Path {
	var p vg.Path
	p.Move(vg.Point{X: ctr.X + r, Y: ctr.Y})
	p.Arc(ctr, r, 0, 2*math.Pi)
	p.Close()
	return p
}
