package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math/bits"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/coalescing-course/coalesce/internal/words"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/simt"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

// Banks is the size of a bank diagram: as wide as a chart, tall enough
// for the 34 bank rows of a padded 32-wide tile.
var Banks = Size{Width: 18 * vg.Centimeter, Height: 16 * vg.Centimeter, DPI: 120}

// ErrNotShared is an instruction BankDiagram or TracedBankDiagram cannot
// draw: one that does not access shared memory, or a kernel without a
// shared tile.
var ErrNotShared = errors.New("plots: not a shared-memory access")

// BankDiagram draws instruction instr of warp w of the launch s, a
// shared-memory access of the tiled transpose, as shared memory's banks
// see it: the tile s[tile][tile+pad] laid out word after word in rows of
// 32, so that each column is one of the 32 banks of 4 bytes (word i in
// bank i mod 32); the tile's rows shaded in turn and its padding words
// marked; the words the warp's lanes access filled dark; and under the
// banks, each bank's distinct words among them. The busiest bank's count
// is the access's wavefronts (sectors.Wavefronts), which the picture
// states. instr counts from 0, as Instructions' indices do. Draw it at
// the Banks size.
func BankDiagram(s spec.Spec, w int64, instr int) (*plot.Plot, error) {
	d, title, err := newBankDrawing(s, w, instr)
	if err != nil {
		return nil, err
	}
	return bankPlot(d, title), nil
}

// TracedBankDiagram draws one shared-memory instruction of a learner's
// kernel, as lessons/simt traced it (simt.Launch.Trace), the way
// BankDiagram draws the transpose's: the words the warp's lanes access,
// each bank's distinct words among them, and the busiest bank's count,
// the access's wavefronts. The learner's array has no shape the model
// knows (a Shared is a run of words, indexed as the kernel pleases), so
// its words are laid out from word 0 in the banks' own rows of 32, down
// to the row of the last word the warp accesses, and the picture says
// so. The title names the warp, the buffer and the access site in the
// learner's source, as TracedDiagram's does. A global instruction is
// refused (ErrNotShared: TracedDiagram draws its sectors), and so is a
// shared access of other than 4 bytes a lane, which the bank rule does
// not model. Draw it at the Banks size.
func TracedBankDiagram(tr simt.Traced) (*plot.Plot, error) {
	d, title, err := newTracedBankDrawing(tr)
	if err != nil {
		return nil, err
	}
	return bankPlot(d, title), nil
}

// newTracedBankDrawing returns TracedBankDiagram's drawing and title.
func newTracedBankDrawing(tr simt.Traced) (*bankDrawing, string, error) {
	in := tr.Instruction
	if !in.Shared {
		return nil, "", fmt.Errorf("%w: the %s of %s at %s is a global access (TracedDiagram draws its sectors)", ErrNotShared, op(in.Store), in.Buffer, in.Access)
	}
	d, err := bankDrawingOf(in.Warp, in.Store)
	if err != nil {
		return nil, "", fmt.Errorf("plots: the shared %s of %s at %s: %w", op(in.Store), in.Buffer, in.Access, err)
	}
	d.buffer = in.Buffer
	return d, fmt.Sprintf("warp %d: shared %s %s at %s", tr.Warp, op(in.Store), in.Buffer, in.Access), nil
}

// bankPlot is the plot of a bank drawing, titled.
func bankPlot(d *bankDrawing, title string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontOf(TitleFontSize)
	p.Title.Padding = vg.Points(4)
	p.HideAxes()
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(d)
	return p
}

// newBankDrawing returns BankDiagram's drawing and title.
func newBankDrawing(s spec.Spec, w int64, instr int) (*bankDrawing, string, error) {
	if s.Tile <= 0 {
		return nil, "", fmt.Errorf("%w: %s has no shared tile (only transpose_tiled has one)", ErrNotShared, s.Brief())
	}
	ins, err := sectors.Instructions(s, w)
	if errors.Is(err, sectors.ErrWarp) {
		return nil, "", fmt.Errorf("%w: %w", ErrWarp, err)
	}
	if err != nil {
		return nil, "", wrap(err)
	}
	if instr < 0 || instr >= len(ins) {
		return nil, "", fmt.Errorf("%w: warp %d of %s has instructions 0 to %d, not %d", ErrInstr, w, s.Brief(), len(ins)-1, instr)
	}
	in := ins[instr]
	if !in.Shared {
		var shared []string
		for i, x := range ins {
			if x.Shared {
				shared = append(shared, strconv.Itoa(i))
			}
		}
		return nil, "", fmt.Errorf("%w: instruction %d of warp %d of %s is a global %s (%s); its shared ones are %v",
			ErrNotShared, instr, w, s.Brief(), op(in.Store), in.Access, shared)
	}
	d, err := bankDrawingOf(in.Warp, in.Store)
	if err != nil {
		return nil, "", wrap(err)
	}
	d.tile, d.pad, d.instr, d.of = s.Tile, s.Pad, instr, len(ins)
	return d, fmt.Sprintf("%s, warp %d: shared %s %s", s.Brief(spec.FieldN), w, op(in.Store), in.Access), nil
}

// bankDrawingOf returns the drawing of the shared access w, its words
// counted bank by bank; the caller says what array they are of.
func bankDrawingOf(w sectors.Warp, store bool) (*bankDrawing, error) {
	wavefronts, err := sectors.Wavefronts(w)
	if err != nil {
		return nil, err
	}
	d := &bankDrawing{w: w, store: store, wavefronts: wavefronts}
	d.count()
	return d, nil
}

func op(store bool) string {
	if store {
		return "store"
	}
	return "load"
}

// bankDrawing is the plotter behind BankDiagram: it draws in the plot's
// whole data area, in points.
type bankDrawing struct {
	// tile and pad are the transpose's tile, s[tile][tile+pad]; tile is 0
	// for a learner's array, buffer, whose shape is not known: its words
	// are laid out in the banks' rows of 32.
	tile, pad  int
	buffer     string
	w          sectors.Warp
	store      bool
	wavefronts int
	// instr and of say which of the warp's instructions this is, from 0
	// (a transpose's: a learner's warp is traced, not listed).
	instr, of int
	// lanes holds, for each word of the tile an active lane accesses, how
	// many lanes do; perBank each bank's distinct words among them.
	lanes   map[uint64]int
	perBank [sectors.Banks]int
}

var _ plot.Plotter = (*bankDrawing)(nil)

// Colours of the bank diagram: the tile's rows in two light shades, its
// padding words in a light tint of the padding's role, the accessed words
// in the model's colour.
var (
	bankRowShades = [2]color.Color{color.Gray{Y: 0xf2}, color.Gray{Y: 0xd8}}
	bankPadColor  = color.RGBA{R: 0xfa, G: 0xe1, B: 0xa8, A: 0xff} // a light Orange
	bankUsedColor = Blue
)

func (d *bankDrawing) count() {
	d.lanes = map[uint64]int{}
	for l := range sectors.WarpSize {
		if d.w.Active&(1<<l) == 0 {
			continue
		}
		word := d.w.Addr[l] / sectors.BankBytes
		if d.lanes[word] == 0 {
			d.perBank[word%sectors.Banks]++
		}
		d.lanes[word]++
	}
}

// words returns the words drawn and the bank rows they fill: the tile's,
// or a learner's array's whole rows down to the last word accessed.
func (d *bankDrawing) words() (n, rows int) {
	n = d.tile * (d.tile + d.pad)
	for word := range d.lanes { // a lane past the tile still shows
		n = max(n, int(word)+1)
	}
	rows = max(1, (n+sectors.Banks-1)/sectors.Banks)
	if d.tile == 0 {
		n = rows * sectors.Banks
	}
	return n, rows
}

// rowLen is the words of a row the drawing shades in turn: the tile's
// row with its padding, or a bank row for a learner's array.
func (d *bankDrawing) rowLen() int {
	if d.tile == 0 {
		return sectors.Banks
	}
	return d.tile + d.pad
}

func (d *bankDrawing) Plot(c draw.Canvas, _ *plot.Plot) {
	left, right := c.Min.X+vg.Points(4), c.Max.X-vg.Points(4)
	small := style(diagFont, Black)
	fh := small.FontExtents().Height
	rowLen := d.rowLen()
	n, rows := d.words()

	// Header, from the top.
	header := wrapText(small, d.header(), right-left)
	y := c.Max.Y
	for _, l := range header {
		putLine(c, small, left, y-fh, l)
		y -= fh
	}

	// Top down under the header: the grid, with a column of word labels
	// on the left; the bank numbers; room for the bars' counts; the bars
	// (on the scale of a warp's 32 lanes, so that pictures compare); what
	// they are; the legend; the summary. Rows are as tall as the height
	// left allows, at most 12 points.
	summary := wrapText(small, d.summary(), right-left)
	label := small
	label.XAlign, label.YAlign = draw.XRight, draw.YCenter
	labelW := max(label.Width(strconv.Itoa((rows-1)*sectors.Banks)), label.Width("word")) + vg.Points(4)
	gridL := left + labelW
	col := (right - gridL) / sectors.Banks
	barsH := vg.Points(40)
	under := (fh + vg.Points(2)) + (fh + vg.Points(2)) + barsH + (vg.Points(2) + fh) + (vg.Points(6) + legendHeight) + (vg.Points(6) + vg.Length(len(summary))*fh)
	gridTop := y - vg.Points(6) - fh // "word" over the labels, the banks' name over the grid
	rowH := min(vg.Points(12), (gridTop-c.Min.Y-vg.Points(1)-under)/vg.Length(rows))
	gridBottom := gridTop - rowH*vg.Length(rows)
	bankLabelsBottom := gridBottom - vg.Points(2) - fh
	barsBottom := bankLabelsBottom - vg.Points(2) - fh - barsH
	captionBottom := barsBottom - vg.Points(2) - fh
	legendY := captionBottom - vg.Points(6) - legendHeight
	summaryTop := legendY - vg.Points(6)
	for i, l := range summary {
		putLine(c, small, left, summaryTop-vg.Length(i+1)*fh, l)
	}
	d.drawLegend(c, left, legendY)
	putLine(c, small, gridL, captionBottom, "Under each bank: how many distinct words of it the warp accesses (of at most 32).")

	centered := small
	centered.XAlign, centered.YAlign = draw.XCenter, draw.YBottom
	c.FillText(centered, vg.Point{X: gridL + col*sectors.Banks/2, Y: gridTop + vg.Points(3)}, "banks 0 to 31, left to right")
	label.YAlign = draw.YBottom
	c.FillText(label, vg.Point{X: gridL - vg.Points(4), Y: gridTop + vg.Points(3)}, "word")
	label.YAlign = draw.YCenter

	thin := draw.LineStyle{Color: color.White, Width: vg.Points(0.6)}
	every := max(1, rows/12) // a word label every few rows when they are many
	for r := range rows {
		top := gridTop - vg.Length(r)*rowH
		if r%every == 0 {
			c.FillText(label, vg.Point{X: gridL - vg.Points(4), Y: top - rowH/2}, strconv.Itoa(r*sectors.Banks))
		}
		for b := range sectors.Banks {
			word := r*sectors.Banks + b
			if word >= n {
				continue
			}
			fill := bankRowShades[(word/rowLen)%2]
			if d.tile > 0 && (word%rowLen >= d.tile || word >= d.tile*rowLen) {
				fill = bankPadColor
			}
			if d.lanes[uint64(word)] > 0 {
				fill = bankUsedColor
			}
			box := rectPath(gridL+vg.Length(b)*col, top-rowH, gridL+vg.Length(b+1)*col, top)
			c.SetColor(fill)
			c.Fill(box)
			c.SetLineStyle(thin)
			c.Stroke(box)
		}
	}
	c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0x88}, Width: vg.Points(0.8)})
	c.Stroke(rectPath(gridL, gridTop-vg.Length(rows)*rowH, gridL+col*sectors.Banks, gridTop))

	// Bank numbers between the grid and the bars.
	for b := 0; b < sectors.Banks; b += 4 {
		c.FillText(centered, vg.Point{X: gridL + (vg.Length(b)+0.5)*col, Y: bankLabelsBottom}, strconv.Itoa(b))
	}

	// The bars: each bank's distinct words, the count over every bar
	// that has one.
	c.StrokeLine2(draw.LineStyle{Color: Black, Width: vg.Points(0.8)}, gridL, barsBottom, gridL+col*sectors.Banks, barsBottom)
	for b, k := range d.perBank {
		if k == 0 {
			continue
		}
		x0, x1 := gridL+vg.Length(b)*col+vg.Points(1), gridL+vg.Length(b+1)*col-vg.Points(1)
		top := barsBottom + max(vg.Points(1.5), barsH*vg.Length(k)/sectors.WarpSize)
		c.SetColor(bankUsedColor)
		c.Fill(rectPath(x0, barsBottom, x1, top))
		c.FillText(centered, vg.Point{X: (x0 + x1) / 2, Y: top + vg.Points(1)}, strconv.Itoa(k))
	}
}

// drawLegend writes the legend of the boxes' colours from left at y.
func (d *bankDrawing) drawLegend(c draw.Canvas, left, y vg.Length) {
	sty := style(diagFont, Black)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	const boxW = 22
	mid := y + legendHeight/2
	x := left
	entry := func(fill color.Color, what string) {
		rect := rectPath(x, y, x+vg.Points(boxW), y+legendHeight)
		c.SetColor(fill)
		c.Fill(rect)
		c.SetLineStyle(draw.LineStyle{Color: color.Gray{Y: 0x99}, Width: vg.Points(0.6)})
		c.Stroke(rect)
		x += vg.Points(boxW + 3)
		c.FillText(sty, vg.Point{X: x, Y: mid}, what)
		x += sty.Width(what) + vg.Points(10)
	}
	entry(bankRowShades[0], "")
	x -= vg.Points(10 + 3)
	rows := "tile rows, in turn"
	if d.tile == 0 {
		rows = "rows of 32 words, in turn"
	}
	entry(bankRowShades[1], rows)
	if d.pad > 0 {
		entry(bankPadColor, "padding")
	}
	entry(bankUsedColor, "a word the warp accesses")
}

// header says what the picture shows.
func (d *bankDrawing) header() string {
	verb := "read"
	if d.store {
		verb = "write"
	}
	lanes := words.Plural(bits.OnesCount32(d.w.Active), "active lane")
	if d.tile == 0 {
		_, rows := d.words()
		return fmt.Sprintf("The shared array %s from its word 0, in rows of 32 words, one per bank: word i is in bank i mod 32. Your kernel's shape of the array is not known here, so a row of boxes is a row of the banks, not of your array. Shown: words 0 to %s, to the end of the row of the last word the warp accesses. Dark: the words the warp's %s %s.",
			d.buffer, units.Count.Format(float64(rows*sectors.Banks-1)), lanes, verb)
	}
	rowLen := d.tile + d.pad
	return fmt.Sprintf("Instruction %d of %d. The shared tile s[%d][%d]: %d rows of %s (tile %d + pad %d), one after the other. Each row of boxes is 32 words, one per bank: word i is in bank i mod 32. Dark: the words the warp's %s %s.",
		d.instr+1, d.of, d.tile, rowLen, d.tile, words.Plural(rowLen, "word"), d.tile, d.pad, lanes, verb)
}

// summary says what the bank rule makes of the access.
func (d *bankDrawing) summary() string {
	if len(d.lanes) == 0 {
		return "No lane is active: no wavefront."
	}
	shared := ""
	if active := bits.OnesCount32(d.w.Active); active > len(d.lanes) {
		shared = fmt.Sprintf(" (%d lanes share %s: lanes that access one word share it)", active, words.Plural(len(d.lanes), "distinct word"))
	}
	if d.wavefronts == 1 {
		return fmt.Sprintf("No bank holds two of the words%s: the banks serve the warp at once, 1 wavefront, no bank conflict.", shared)
	}
	busiest := 0
	for b, k := range d.perBank {
		if k > d.perBank[busiest] {
			busiest = b
		}
	}
	return fmt.Sprintf("The busiest bank, bank %d, holds %d of the words%s: a bank serves one word a wavefront, so the access takes %s, %s.",
		busiest, d.perBank[busiest], shared, words.Plural(d.wavefronts, "wavefront"), words.Plural(d.wavefronts-1, "bank conflict"))
}
