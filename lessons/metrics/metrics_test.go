package metrics

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSet(t *testing.T) {
	s := Set{DRAMWrite: 2, LdSectors: 128, "gpu__time_duration.sum": 5, "a_custom": 1}
	assert.Equal(t, []string{LdSectors, DRAMWrite, "a_custom", "gpu__time_duration.sum"}, s.Names())
	v, err := s.Get(LdSectors)
	assert.NoError(t, err)
	assert.Equal(t, 128.0, v)
	_, err = s.Get(StSectors)
	assert.ErrorContains(t, err, `"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum" not in this set`)
}

func TestExactAndKnown(t *testing.T) {
	for _, m := range All {
		assert.True(t, Known(m), m)
	}
	assert.True(t, Exact(LdRequests))
	assert.True(t, Exact(StSectors))
	assert.False(t, Exact(DRAMRead), "DRAM bytes depend on the L2: an estimate")
	assert.False(t, Known("dram__bytes.sum"))
	assert.Equal(t, len(All)+len(Shared)+len(L2FromL1), len(Profiled))
	for _, m := range L2FromL1 {
		assert.True(t, Known(m), m)
		assert.False(t, Exact(m), "%s: the model has no L1 cache", m)
		assert.False(t, IsShared(m), m)
	}
	for _, m := range Shared {
		assert.True(t, Known(m), m)
		assert.Contains(t, Profiled, m)
		assert.NotContains(t, All, m)
		assert.True(t, IsShared(m), m)
		assert.False(t, Exact(m), "%s: how ncu follows the bank rule is measured, not assumed", m)
	}
	assert.False(t, IsShared(LdSectors))
}

// Every metric of the course counts loads or stores, as its ncu name says
// (_st.sum, _write, _ld.sum, _read): IsStore holds to the name.
func TestIsStore(t *testing.T) {
	for _, m := range Profiled {
		store := strings.HasSuffix(m, "_st.sum") || strings.Contains(m, "_write")
		load := strings.HasSuffix(m, "_ld.sum") || strings.Contains(m, "_read")
		assert.True(t, store != load, "%s names neither or both", m)
		assert.Equal(t, store, IsStore(m), m)
	}
	assert.False(t, IsStore("gpu__time_duration.sum"))
}
