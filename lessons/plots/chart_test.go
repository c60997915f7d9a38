package plots

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// A hidden point leaves a gap where the line would pass: the line of
// 4-byte elements goes from stride 2 (8 sectors) to stride 8 (32) through
// stride 4's 16, on log axes a straight line, so only a gap keeps 16 from
// showing.
func TestHiddenPointLeavesAGap(t *testing.T) {
	specs, err := StrideSpecs(StrideBase, []int{4}, []int64{1, 2, 4, 8, 16})
	require.NoError(t, err)
	preds, err := sectors.ModelAll(specs...)
	require.NoError(t, err)
	c, err := SectorsVsStride(preds)
	require.NoError(t, err)
	pts := c.Points()
	require.Len(t, pts, 5, "one point a launch")
	assert.Equal(t, figures.LdSectorsPerRequest.Name, pts[2].Figure.Name)
	assert.Equal(t, 16.0, pts[2].Value, "stride 4: 16 sectors")

	whole, err := c.Plot()
	require.NoError(t, err)
	img, at := drawImage(whole, Notebook)
	line := ElemColor(4)
	require.Positive(t, near(img, at(4, 16), 3, line), "drawn whole, the line passes stride 4 at 16")

	hidden, err := c.PlotWithout(func(p Point) bool { return p.Spec.Stride == 4 })
	require.NoError(t, err)
	img, at = drawImage(hidden, Notebook)
	assert.Zero(t, near(img, at(4, 16), 3, line), "hidden: nothing at stride 4")
	assert.Positive(t, near(img, at(2, 8), 3, line), "stride 2 still shows")
	assert.Positive(t, near(img, at(8, 32), 3, line), "stride 8 still shows")

	_, err = c.PlotWithout(func(Point) bool { return true })
	assert.ErrorIs(t, err, ErrAllHidden)
}

// A hidden measured launch is not drawn, and a hidden reference line is
// left out, the rest of the chart drawn.
func TestHiddenMeasuredAndReference(t *testing.T) {
	snap, m := readSnapshot(t), readRecorded(t)
	c, err := BandwidthVsStruct(snap[spec.UpdateXAoS], snap[spec.UpdateXSoA][0], m)
	require.NoError(t, err)
	var measured, soa int
	for _, p := range c.Points() {
		if p.Measured {
			measured++
		}
		if p.Spec.Kernel == spec.UpdateXSoA {
			soa++
		}
	}
	require.Positive(t, measured)
	require.Equal(t, 2, soa, "the SoA line, modelled and measured")
	p, err := c.PlotWithout(func(p Point) bool { return p.Spec.Kernel == spec.UpdateXSoA || p.Spec.StructBytes == 16 })
	require.NoError(t, err)
	boxes := textBoxes(t, p, Notebook)
	for s := range boxes {
		assert.NotContains(t, s, "SoA model:", "the SoA line's label goes with it")
	}
}
