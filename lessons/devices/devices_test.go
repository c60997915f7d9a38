package devices

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookup(t *testing.T) {
	p, err := Lookup("h200")
	require.NoError(t, err)
	assert.Equal(t, "NVIDIA H200", p.GPU)
	// The L2 the driver reports on the device machine: 60 MiB (harness --info).
	assert.Equal(t, int64(62914560), p.L2Bytes)
	assert.NotEmpty(t, p.Provenance)
	assert.NotContains(t, p.Provenance, "PROVISIONAL")

	_, err = Lookup("a100")
	assert.ErrorIs(t, err, ErrUnknown)
	assert.ErrorContains(t, err, `"a100": want one of h200`)
	assert.Equal(t, []string{"h200"}, Names())
}

func TestValidate(t *testing.T) {
	good, err := Lookup("h200")
	require.NoError(t, err)
	require.NoError(t, good.Validate())
	tests := []struct {
		name   string
		mutate func(*Profile)
		msg    string
	}{
		{"no name", func(p *Profile) { p.Name = "" }, "without a name"},
		{"no SMs", func(p *Profile) { p.SMs = 0 }, "sms >= 1"},
		{"64-byte sectors", func(p *Profile) { p.SectorBytes = 64 }, "32-byte sectors"},
		{"no L2", func(p *Profile) { p.L2Bytes = 0 }, "positive l2_bytes"},
		{"fetch 16", func(p *Profile) { p.DefaultL2Fetch = 16 }, "32, 64 or 128"},
		{"spread 1", func(p *Profile) { p.DRAM.Spread = 1 }, "0 <= spread < 1"},
		{"no bandwidth", func(p *Profile) { p.Time.CopyBandwidth = 0 }, "positive copy_bandwidth"},
		{"negative L1 line rate", func(p *Profile) { p.Time.L1LineRate = -1 }, "l1_line_rate -1"},
		{"negative access bytes", func(p *Profile) { p.Time.DRAMAccessBytes = -5 }, "dram_access_bytes -5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := good
			tt.mutate(&p)
			assert.ErrorContains(t, p.Validate(), tt.msg)
		})
	}
}
