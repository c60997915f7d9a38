package devices

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calibrated returns a profile as coalesce calibrate might register it,
// with its own name, claiming the driver name gpu.
func calibrated(t *testing.T, name, gpu string) Profile {
	t.Helper()
	p, err := Lookup("rtx4090")
	require.NoError(t, err)
	p.Name, p.Match, p.Estimated = name, []string{gpu}, nil
	t.Cleanup(func() {
		reg.mu.Lock()
		delete(reg.added, name)
		reg.mu.Unlock()
	})
	return p
}

// restoreCurrent puts the course's default back after a test that calls Use.
func restoreCurrent(t *testing.T) {
	t.Cleanup(func() { require.NoError(t, Use(Course, CourseWhy)) })
}

func TestMatch(t *testing.T) {
	tests := []struct {
		gpu, want string
	}{
		{"NVIDIA H200", "h200"},
		{"  nvidia a100-sxm4-80gb\n", "a100-80gb"},
		{"A100-SXM4-40GB", "a100-40gb"},
		{"NVIDIA H100 80GB HBM3", "h100-sxm"},
		{"Tesla T4", "t4"},
		{"NVIDIA L4", "l4"},
		{"NVIDIA GeForce RTX 4090", "rtx4090"},
		{"NVIDIA GeForce RTX 3090", "rtx3090"},
		{"NVIDIA GeForce RTX 3090 Ti", ""}, // another GPU: no prefix matching
		{"NVIDIA A100 80GB PCIe", ""},      // another memory system than the SXM4's
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.gpu, func(t *testing.T) {
			p, ok := Match(tt.gpu)
			assert.Equal(t, tt.want != "", ok)
			assert.Equal(t, tt.want, p.Name)
		})
	}
}

func TestRegister(t *testing.T) {
	p := calibrated(t, "rtx4090-calibrated", "NVIDIA GeForce RTX 4090 D")
	require.NoError(t, Register(p))
	got, err := Lookup("rtx4090-calibrated")
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.Contains(t, Names(), "rtx4090-calibrated")
	m, ok := Match("nvidia geforce rtx 4090 d")
	assert.True(t, ok)
	assert.Equal(t, "rtx4090-calibrated", m.Name)

	// The registry holds a copy: the caller's later edits stay its own.
	p.Citations["sms"] = "changed"
	got.Match[0] = "changed"
	again, err := Lookup("rtx4090-calibrated")
	require.NoError(t, err)
	assert.NotEqual(t, "changed", again.Citations["sms"])
	assert.Equal(t, "NVIDIA GeForce RTX 4090 D", again.Match[0])

	// Registering the name again replaces the profile.
	p.SMs = 114
	p.Citations["sms"] = "measured on this GPU"
	require.NoError(t, Register(p))
	again, err = Lookup("rtx4090-calibrated")
	require.NoError(t, err)
	assert.Equal(t, 114, again.SMs)

	t.Run("shipped name", func(t *testing.T) {
		q := calibrated(t, "h200", "NVIDIA H200 NVL")
		err := Register(q)
		assert.ErrorIs(t, err, ErrShipped)
		assert.ErrorContains(t, err, `"h200", want a name other than h200, a100-40gb`)
	})
	t.Run("claimed driver name", func(t *testing.T) {
		q := calibrated(t, "mine", "nvidia geforce rtx 3090")
		assert.ErrorContains(t, Register(q), `mine: match "nvidia geforce rtx 3090" is rtx3090's already`)
		_, err := Lookup("mine")
		assert.ErrorIs(t, err, ErrUnknown, "a refused profile is not registered")
	})
	t.Run("invalid", func(t *testing.T) {
		q := calibrated(t, "mine", "NVIDIA Mine")
		q.ComputeCapability = ""
		assert.ErrorContains(t, Register(q), `mine: compute_capability ""`)
	})
}

func TestUseCurrent(t *testing.T) {
	p, why := Current()
	assert.Equal(t, Course, p.Name)
	assert.Equal(t, "the course's H200: no GPU of this machine chosen", why)

	restoreCurrent(t)
	err := Use("a100", "because")
	assert.ErrorIs(t, err, ErrUnknown)
	assert.ErrorContains(t, Use("l4", " "), `Use("l4") without a reason`)
	p, _ = Current()
	assert.Equal(t, Course, p.Name, "a refused Use changes nothing")

	q := calibrated(t, "l4-calibrated", "NVIDIA L4 (test)")
	require.NoError(t, Register(q))
	require.NoError(t, Use("l4-calibrated", "calibrated on this L4, 2026-12-01"))
	p, why = Current()
	assert.Equal(t, "l4-calibrated", p.Name)
	assert.Equal(t, "calibrated on this L4, 2026-12-01", why)
}

// TestRegistryRace registers, chooses and looks up profiles from many
// goroutines at once, as the notebooks' kernel and the grader's workers
// do; go test -race finds any access the lock misses.
func TestRegistryRace(t *testing.T) {
	restoreCurrent(t)
	const workers = 8
	var wg sync.WaitGroup
	for w := range workers {
		name := fmt.Sprintf("race-%d", w)
		p := calibrated(t, name, "NVIDIA Race "+name)
		wg.Go(func() {
			for i := range 50 {
				p.SMs = 1 + i
				assert.NoError(t, Register(p))
				assert.NoError(t, Use(name, "race"))
				cur, why := Current()
				assert.NotEmpty(t, cur.Name)
				assert.Equal(t, "race", why)
				got, err := Lookup(name)
				assert.NoError(t, err)
				assert.Equal(t, name, got.Name)
				_, ok := Match("NVIDIA Race " + name)
				assert.True(t, ok)
				assert.Contains(t, Names(), name)
			}
		})
	}
	wg.Wait()
}
