// Package devices holds the device profiles the sector model reads: how many
// SMs a GPU has, how large its L2 is, what it fetches from DRAM on a miss and
// how fast it copies. They are data (profiles.json), so that adding a GPU is
// adding a record, not editing the model, and every value says where it
// comes from (Profile.Citations): measured on the GPU, with the command, or
// read from a named datasheet. What only a measurement can give (the L2's
// reuse and dirty capacities, the time model) is, for a GPU the course has
// not measured, an estimate scaled from the H200's measurements and listed
// in Profile.Estimated until coalesce calibrate measures it.
//
// The registry adds profiles at run time (Register, a calibrated one),
// finds the profile of a live GPU by the name its driver reports (Match)
// and says which profile a spec without "device" gets, and why (Use,
// Current).
package devices

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
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
	// Match lists every name the driver may report for this GPU
	// (cudaDeviceProp.name, nvidia-smi's Product Name): a live GPU whose
	// name is one of them is described by this profile (see Match).
	Match []string `json:"match,omitempty"`
	// ComputeCapability is the device's major.minor version, for example
	// "9.0": it sets the per-SM limits the CUDA C++ Programming Guide
	// tabulates.
	ComputeCapability string `json:"compute_capability"`
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
	// Provenance says, in a sentence, where the profile comes from; Citations
	// says it field by field.
	Provenance string `json:"provenance"`
	// Estimated lists the JSON paths (see Paths) of the values that are
	// estimates until coalesce calibrate measures them on this GPU.
	Estimated []string `json:"estimated,omitempty"`
	// Citations says, for every path of Paths, where its value comes from:
	// a named datasheet or whitepaper, the CUDA C++ Programming Guide, a
	// measurement with its GPU, driver, CUDA version, date and command, or
	// how an estimate was derived. (In profiles.json: "sources".)
	Citations map[string]string `json:"sources"`
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
	// keeps about half of it (the H200 profile's 41.1 MB leaves 17.9 MB
	// of a copy's writes in the model; the H200 left 19.5 MB, see go doc
	// lessons/sectors).
	DirtyL2Bytes int64 `json:"dirty_l2_bytes"`
	// SparseDirtyL2Bytes is DirtyL2Bytes for lines that hold only a few
	// written sectors and no data read from DRAM: the L2 keeps far fewer of
	// them.
	SparseDirtyL2Bytes int64 `json:"sparse_dirty_l2_bytes"`
	// DirtyWatermarkBytes caps the dirty bytes the L2 still holds when a
	// launch ends, counted from the most recently touched line: a
	// read-modify-write, whose every line is dirty, is held to it where a
	// copy, half clean lines, is held by DirtyL2Bytes first. 0 is no cap.
	DirtyWatermarkBytes int64 `json:"dirty_watermark_bytes"`
	// FillL2Bytes is how many bytes of sectors written only in part the L2
	// holds unfilled: past it, counting from the most recently touched, it
	// fills them from DRAM (when PartialWriteFill) even if their lines are
	// not written back before the launch ends. 0: only a write-back fills.
	FillL2Bytes int64 `json:"fill_l2_bytes"`
	// BusyDirtyL2Bytes is what DirtyL2Bytes grows by, for lines written
	// whole and never read, in a launch that keeps DRAM busy: a copy at
	// the copy bandwidth leaves more of its output in the L2 than the same
	// copy at half of it (measured on the H200, see go doc lessons/sectors).
	// 0 leaves the launch's speed out of the DRAM level.
	BusyDirtyL2Bytes int64 `json:"busy_dirty_l2_bytes,omitempty"`
	// ProfiledDirtyBytes is the dirty data the L2 holds when a launch
	// starts under Nsight Compute, written back as the launch's traffic
	// pushes it out: a launch that only reads still writes it.
	ProfiledDirtyBytes int64 `json:"profiled_dirty_bytes"`
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
	// DRAMRewriteBytes is the DRAM time, as bytes at CopyBandwidth, that
	// writing back a sector far from any other costs on top of its access
	// when the warp that wrote it had just read its line: a sector
	// rewritten at spacing s costs DRAMRewriteBytes × (1 -
	// DRAMAccessSpacing / s) more. A read-modify-write of one field a line
	// takes the H200 longer than a strided copy at the same spacing that
	// also fills the sectors it writes, though it moves a fifth fewer DRAM
	// bytes (package sectors, Time).
	DRAMRewriteBytes float64 `json:"dram_rewrite_bytes"`
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

// shipped reads profiles.json once: the profiles built into the course,
// each with a source for every value, no driver name claimed twice.
var shipped = sync.OnceValues(func() ([]Profile, error) {
	var profiles []Profile
	if err := json.Unmarshal(profilesJSON, &profiles); err != nil {
		return nil, fmt.Errorf("devices: profiles.json: %w", err)
	}
	for i, p := range profiles {
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("devices: profiles.json: %w", err)
		}
		if err := matchFree(profiles[:i], p); err != nil {
			return nil, fmt.Errorf("devices: profiles.json: %w", err)
		}
	}
	return profiles, nil
})

// matchFree checks that no profile of others but one called p.Name
// already claims one of p's driver names, so that a live GPU matches one
// profile at most.
func matchFree(others []Profile, p Profile) error {
	for _, o := range others {
		if o.Name == p.Name {
			continue
		}
		for _, m := range p.Match {
			if slices.ContainsFunc(o.Match, func(n string) bool { return strings.EqualFold(strings.TrimSpace(n), strings.TrimSpace(m)) }) {
				return fmt.Errorf("devices: %s: match %q is %s's already, want names no other profile claims", p.Name, m, o.Name)
			}
		}
	}
	return nil
}

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

// Lookup returns the profile called name: a shipped one or one added by
// Register.
func Lookup(name string) (Profile, error) {
	ps, err := shipped()
	if err != nil {
		return Profile{}, err
	}
	for _, p := range ps {
		if p.Name == name {
			return p.clone(), nil
		}
	}
	reg.mu.RLock()
	p, ok := reg.added[name]
	reg.mu.RUnlock()
	if ok {
		return p.clone(), nil
	}
	return Profile{}, fmt.Errorf("%w %q: want one of %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Names returns the names of every profile, shipped or registered, sorted.
func Names() []string {
	ps, _ := shipped()
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	reg.mu.RLock()
	for name := range reg.added {
		names = append(names, name)
	}
	reg.mu.RUnlock()
	slices.Sort(names)
	return names
}

// clone copies p's slices and map, so that a caller's edits never reach
// the registry.
func (p Profile) clone() Profile {
	p.Match = slices.Clone(p.Match)
	p.Estimated = slices.Clone(p.Estimated)
	p.Citations = maps.Clone(p.Citations)
	return p
}

// Paths returns the JSON paths of the values a profile must say the
// source of, in the order profiles.json writes them: "match",
// "compute_capability", "sms", ..., "dram.reuse_l2_bytes", ...,
// "time.copy_bandwidth", .... Name, GPU, Provenance, Estimated and
// Citations are about the profile, not values of the device, and are not
// among them.
func Paths() []string {
	out := make([]string, len(fields()))
	for i, f := range fields() {
		out[i] = f.path
	}
	return out
}

// field is one path of Paths and where it is in a Profile.
type field struct {
	path  string
	index []int // reflect.Value.FieldByIndex's
}

var fields = sync.OnceValue(func() []field {
	var out []field
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for f := range t.Fields() {
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			at := append(slices.Clone(index), f.Index...)
			switch {
			case tag == "name" || tag == "gpu" || tag == "provenance" || tag == "estimated" || tag == "sources":
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+tag+".", at)
			default:
				out = append(out, field{path: prefix + tag, index: at})
			}
		}
	}
	walk(reflect.TypeFor[Profile](), "", nil)
	return out
})

// number returns the number at path in the profile v points to, settable.
func number(v reflect.Value, path string) (reflect.Value, error) {
	for _, f := range fields() {
		if f.path != path {
			continue
		}
		x := v.Elem().FieldByIndex(f.index)
		switch x.Kind() {
		case reflect.Int, reflect.Int64, reflect.Float64:
			return x, nil
		}
		return reflect.Value{}, fmt.Errorf("devices: %s is a %s, not a number", path, x.Kind())
	}
	return reflect.Value{}, fmt.Errorf("devices: no path %q; want one of Paths()", path)
}

// Number returns the value at path, one of Paths naming a number (an
// integer or a float), as a float64: "dram.reuse_l2_bytes". A calibration
// reads and writes the values it fits by their paths, the names their
// citations and estimates go by.
func (p *Profile) Number(path string) (float64, error) {
	x, err := number(reflect.ValueOf(p), path)
	if err != nil {
		return 0, err
	}
	if x.CanInt() {
		return float64(x.Int()), nil
	}
	return x.Float(), nil
}

// SetNumber sets the value at path, one of Paths naming a number, to v;
// an integer field takes v's integer part (int64(v)).
func (p *Profile) SetNumber(path string, v float64) error {
	x, err := number(reflect.ValueOf(p), path)
	if err != nil {
		return err
	}
	if x.CanInt() {
		x.SetInt(int64(v))
	} else {
		x.SetFloat(v)
	}
	return nil
}

// Validate checks that a profile's numbers can drive the model and that
// each says where it comes from.
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
	case p.DRAM.SparseDirtyL2Bytes < 0 || p.DRAM.DirtyWatermarkBytes < 0 || p.DRAM.ProfiledDirtyBytes < 0 || p.DRAM.FillL2Bytes < 0:
		return fmt.Errorf("devices: %s: sparse_dirty_l2_bytes %d, dirty_watermark_bytes %d, fill_l2_bytes %d, profiled_dirty_bytes %d: want each >= 0",
			p.Name, p.DRAM.SparseDirtyL2Bytes, p.DRAM.DirtyWatermarkBytes, p.DRAM.FillL2Bytes, p.DRAM.ProfiledDirtyBytes)
	case !ValidL2Fetch(p.DefaultL2Fetch):
		return fmt.Errorf("devices: %s: default_l2_fetch_granularity %d, want %s", p.Name, p.DefaultL2Fetch, L2FetchChoices())
	case p.Time.CopyBandwidth <= 0 || p.Time.LatencySeconds <= 0 || p.Time.BlockRate <= 0 || p.Time.LaunchSeconds < 0 || p.Time.LatencyPerByte < 0:
		return fmt.Errorf("devices: %s: want positive copy_bandwidth, latency_seconds and block_rate", p.Name)
	case p.Time.L2LatencySeconds < 0 || p.Time.DRAMAccessBytes < 0 || p.Time.DRAMAccessSpacing < 0 || p.Time.DRAMRewriteBytes < 0 || p.Time.L1LineRate < 0 || p.Time.L2StoreRate < 0 || p.Time.SharedWavefrontRate < 0:
		return fmt.Errorf("devices: %s: time: l2_latency_seconds %v, dram_access_bytes %v, dram_access_spacing %v, dram_rewrite_bytes %v, l1_line_rate %v, l2_store_rate %v, shared_wavefront_rate %v: want each >= 0 (0 leaves its limit out)",
			p.Name, p.Time.L2LatencySeconds, p.Time.DRAMAccessBytes, p.Time.DRAMAccessSpacing, p.Time.DRAMRewriteBytes, p.Time.L1LineRate, p.Time.L2StoreRate, p.Time.SharedWavefrontRate)
	case !validCC(p.ComputeCapability):
		return fmt.Errorf("devices: %s: compute_capability %q, want major.minor, for example \"9.0\"", p.Name, p.ComputeCapability)
	}
	seen := map[string]bool{}
	for _, m := range p.Match {
		key := strings.ToLower(strings.TrimSpace(m))
		switch {
		case key == "":
			return fmt.Errorf("devices: %s: empty match entry, want the name the driver reports, for example \"NVIDIA H200\"", p.Name)
		case seen[key]:
			return fmt.Errorf("devices: %s: match %q twice, want each name once", p.Name, m)
		}
		seen[key] = true
	}
	known := Paths()
	for _, e := range p.Estimated {
		if !slices.Contains(known, e) {
			return fmt.Errorf("devices: %s: estimated %q, want one of %s", p.Name, e, strings.Join(known, ", "))
		}
	}
	for k := range p.Citations {
		if !slices.Contains(known, k) {
			return fmt.Errorf("devices: %s: sources has %q, want one of %s", p.Name, k, strings.Join(known, ", "))
		}
	}
	for _, k := range known {
		if k == "match" && len(p.Match) == 0 {
			continue // no name claimed, nothing to source
		}
		if strings.TrimSpace(p.Citations[k]) == "" {
			return fmt.Errorf("devices: %s: no source for %s, want where its value comes from (a named datasheet, a measurement, or how it was estimated)", p.Name, k)
		}
	}
	return nil
}

// validCC reports whether cc is a compute capability: digits, a dot,
// digits.
func validCC(cc string) bool {
	major, minor, ok := strings.Cut(cc, ".")
	digits := func(s string) bool {
		return s != "" && len(s) <= 3 && strings.Trim(s, "0123456789") == ""
	}
	return ok && digits(major) && digits(minor)
}
