// Package devices holds the device profiles the sector model reads: how many
// SMs a GPU has, how large its L2 is, what it fetches from DRAM on a miss and
// how fast it copies. They are data (profiles.json), measured on the device
// each profile names, with the command that measured them kept beside the
// numbers, so that adding a GPU is adding a record, not editing the model.
package devices

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Profile describes one GPU as the model sees it.
type Profile struct {
	// Name is the spec's device value, for example "h200".
	Name string `json:"name"`
	// GPU is the name the driver reports, for example "NVIDIA H200".
	GPU string `json:"gpu"`
	// SMs is the number of streaming multiprocessors.
	SMs int `json:"sms"`
	// MaxThreadsPerSM is the most threads one SM holds at once.
	MaxThreadsPerSM int `json:"max_threads_per_sm"`
	// MaxBlocksPerSM is the most blocks one SM holds at once, whatever
	// their size (cudaDeviceProp.maxBlocksPerMultiProcessor): 32 on
	// compute capability 9.0, so blocks of one warp fill only half of an
	// H200 SM's 2048 thread slots.
	MaxBlocksPerSM int `json:"max_blocks_per_sm"`
	// WarpSize is the number of lanes that issue one memory instruction together.
	WarpSize int `json:"warp_size"`
	// SectorBytes is the unit L1 and L2 track and fetch: 32 bytes.
	SectorBytes int `json:"sector_bytes"`
	// LineBytes is the cache line, four sectors.
	LineBytes int `json:"line_bytes"`
	// L2Bytes is the L2 capacity the driver reports.
	L2Bytes int64 `json:"l2_bytes"`
	// DefaultL2Fetch is cudaLimitMaxL2FetchGranularity before a program sets it.
	DefaultL2Fetch int `json:"default_l2_fetch_granularity"`
	// DRAM describes what the L2 sends to and asks of DRAM.
	DRAM DRAM `json:"dram"`
	// Time holds the time model's parameters.
	Time Time `json:"time"`
	// Provenance says where, when and how the numbers were measured.
	Provenance string `json:"provenance"`
}

// DRAM holds the measured parameters of the model's DRAM level.
type DRAM struct {
	// ReuseL2Bytes is the footprint up to which data read once stays in L2
	// for a later read in the same launch.
	ReuseL2Bytes int64 `json:"reuse_l2_bytes"`
	// DirtyL2Bytes decides which written lines the L2 still holds when a
	// launch ends, and so never writes to DRAM inside it: those whose LRU
	// stack distance (the distinct bytes of lines touched, read or
	// written, since their last touch) is under it. It is a distance, not
	// the bytes of writes left: a copy, which reads as much as it writes,
	// keeps about half of it (the H200 profile's 32.5 MB leaves 16.3 MB
	// of a copy's writes in the model; the H200 left 19 MB, see go doc
	// lessons/sectors).
	DirtyL2Bytes int64 `json:"dirty_l2_bytes"`
	// SparseDirtyL2Bytes is DirtyL2Bytes for lines that hold only a few
	// written sectors and no data read from DRAM: the L2 keeps far fewer of
	// them.
	SparseDirtyL2Bytes int64 `json:"sparse_dirty_l2_bytes"`
	// Spread widens ReuseL2Bytes and DirtyL2Bytes into a range: a line is
	// kept for sure below (1-Spread) times the capacity and never above
	// (1+Spread) times it, since a hashed, partitioned L2 does not drop
	// lines at one exact distance.
	Spread float64 `json:"spread"`
	// PartialWriteFill is true when a sector written only in part is read
	// from DRAM before it is written back (the L2 merges whole sectors).
	PartialWriteFill bool `json:"partial_write_fill"`
}

// Time holds the parameters of the time model (package sectors, time.go),
// fitted by calibrate.FitTime to the device's timed launches.
type Time struct {
	// CopyBandwidth is the bytes per second cudaMemcpy moves device to
	// device, read plus write: the ceiling of every kernel.
	CopyBandwidth float64 `json:"copy_bandwidth"`
	// LaunchSeconds is the fixed cost of a launch, seen on tiny ones.
	LaunchSeconds float64 `json:"launch_seconds"`
	// LatencySeconds is the DRAM load latency of an idle memory system.
	LatencySeconds float64 `json:"latency_seconds"`
	// LatencyPerByte is how much the latency grows for every byte an SM
	// keeps in flight: queueing, the reason more in flight stops helping.
	LatencyPerByte float64 `json:"latency_per_byte"`
	// BlockRate is the most thread blocks per second the device starts.
	BlockRate float64 `json:"block_rate"`

	// The limits below are left out where they are 0: a profile from a
	// datasheet has none of them until a run calibrates it.

	// DRAMAccessBytes is the DRAM time an access far from any other costs,
	// as bytes at CopyBandwidth: a 32- or 64-byte access still occupies
	// the DRAM for about a burst and a row's opening.
	DRAMAccessBytes float64 `json:"dram_access_bytes"`
	// DRAMAccessSpacing is the spacing of a request's DRAM blocks, in
	// bytes, under which an access costs no more than its bytes: an access
	// at spacing s costs DRAMAccessBytes × (1 - DRAMAccessSpacing / s), as
	// blocks closer together share the DRAM rows they open.
	DRAMAccessSpacing float64 `json:"dram_access_spacing"`
	// L2LatencySeconds is the latency of a load the L2 holds.
	L2LatencySeconds float64 `json:"l2_latency_seconds"`
	// L1LineRate is the lines per second one SM's L1 looks up: a request
	// whose lanes touch many lines takes a cycle for each.
	L1LineRate float64 `json:"l1_line_rate"`
	// L2StoreRate is the store packets per second the whole L2 accepts: a
	// store request costs it one for each line it touches or, where more,
	// for each sector it writes in part (merged into the sector the L2
	// holds).
	L2StoreRate float64 `json:"l2_store_rate"`
	// SharedWavefrontRate is the shared-memory wavefronts per second one
	// SM serves: bank conflicts cost a wavefront each.
	SharedWavefrontRate float64 `json:"shared_wavefront_rate"`
}

//go:embed profiles.json
var profilesJSON []byte

// load reads profiles.json once.
var load = sync.OnceValues(func() ([]Profile, error) {
	var profiles []Profile
	if err := json.Unmarshal(profilesJSON, &profiles); err != nil {
		return nil, fmt.Errorf("devices: profiles.json: %w", err)
	}
	for _, p := range profiles {
		if err := p.Validate(); err != nil {
			return nil, err
		}
	}
	return profiles, nil
})

// L2FetchGranularities are the values cudaLimitMaxL2FetchGranularity
// takes, in bytes: how much the L2 may fetch from DRAM on a miss.
var L2FetchGranularities = []int{32, 64, 128}

// ValidL2Fetch reports whether b is one of L2FetchGranularities.
func ValidL2Fetch(b int) bool { return slices.Contains(L2FetchGranularities, b) }

// L2FetchChoices writes L2FetchGranularities for an error message: "32, 64 or 128".
func L2FetchChoices() string {
	g := L2FetchGranularities
	words := make([]string, len(g))
	for i, v := range g {
		words[i] = strconv.Itoa(v)
	}
	return strings.Join(words[:len(g)-1], ", ") + " or " + words[len(g)-1]
}

// ErrUnknown is a device name with no profile.
var ErrUnknown = errors.New("devices: unknown device")

// Lookup returns the profile called name.
func Lookup(name string) (Profile, error) {
	ps, err := load()
	if err != nil {
		return Profile{}, err
	}
	for _, p := range ps {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("%w %q: want one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Names returns the names of every profile, sorted.
func Names() []string {
	ps, _ := load()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	slices.Sort(names)
	return names
}

// Validate checks that a profile's numbers can drive the model.
func (p Profile) Validate() error {
	switch {
	case p.Name == "":
		return errors.New("devices: profile without a name")
	case p.SMs < 1 || p.MaxThreadsPerSM < 32 || p.MaxBlocksPerSM < 1 || p.WarpSize != 32:
		return fmt.Errorf("devices: %s: want sms >= 1, max_threads_per_sm >= 32, max_blocks_per_sm >= 1 and warp_size 32", p.Name)
	case p.SectorBytes != 32 || p.LineBytes != 128:
		return fmt.Errorf("devices: %s: want 32-byte sectors in 128-byte lines", p.Name)
	case p.DRAM.Spread < 0 || p.DRAM.Spread >= 1:
		return fmt.Errorf("devices: %s: spread %v, want 0 <= spread < 1", p.Name, p.DRAM.Spread)
	case p.L2Bytes <= 0 || p.DRAM.ReuseL2Bytes <= 0 || p.DRAM.DirtyL2Bytes < 0:
		return fmt.Errorf("devices: %s: want positive l2_bytes and reuse_l2_bytes", p.Name)
	case !ValidL2Fetch(p.DefaultL2Fetch):
		return fmt.Errorf("devices: %s: default_l2_fetch_granularity %d, want %s", p.Name, p.DefaultL2Fetch, L2FetchChoices())
	case p.Time.CopyBandwidth <= 0 || p.Time.LatencySeconds <= 0 || p.Time.BlockRate <= 0 || p.Time.LaunchSeconds < 0 || p.Time.LatencyPerByte < 0:
		return fmt.Errorf("devices: %s: want positive copy_bandwidth, latency_seconds and block_rate", p.Name)
	case p.Time.L2LatencySeconds < 0 || p.Time.DRAMAccessBytes < 0 || p.Time.DRAMAccessSpacing < 0 || p.Time.L1LineRate < 0 || p.Time.L2StoreRate < 0 || p.Time.SharedWavefrontRate < 0:
		return fmt.Errorf("devices: %s: time: l2_latency_seconds %v, dram_access_bytes %v, dram_access_spacing %v, l1_line_rate %v, l2_store_rate %v, shared_wavefront_rate %v: want each >= 0 (0 leaves its limit out)",
			p.Name, p.Time.L2LatencySeconds, p.Time.DRAMAccessBytes, p.Time.DRAMAccessSpacing, p.Time.L1LineRate, p.Time.L2StoreRate, p.Time.SharedWavefrontRate)
	}
	return nil
}
