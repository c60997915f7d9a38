package calibrate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/measure"
)

// Choose picks the profile the model should use for the GPU info
// describes, and says why, in words for the learner:
//
//   - a calibration of this GPU in the cache: "calibrated on this NVIDIA
//     GeForce RTX 4090, 2026-12-01";
//   - else a shipped profile of the GPU the driver names: "datasheet
//     estimate for NVIDIA L4", or "the course's H200";
//   - else the H200's, with what to do about it.
//
// A calibration of another configuration (the SMs or the L2 differ: a MIG
// slice, say) is passed over, and an unreadable one is moved aside; the
// reason says so.
func Choose(info measure.DeviceInfo) (devices.Profile, string) {
	var aside string
	switch c, ok, err := Cached(info.GPU); {
	case ok && c.SMs == info.SMs && c.L2Bytes == info.L2Bytes:
		return c.Profile, fmt.Sprintf("calibrated on this %s, %s", info.GPU, c.Calibrated)
	case ok:
		aside = fmt.Sprintf(" (the cached calibration is of %d SMs and %d B of L2, this GPU has %d and %d: run coalesce calibrate -force)", c.SMs, c.L2Bytes, info.SMs, info.L2Bytes)
	case err != nil:
		var ce *CorruptError
		if errors.As(err, &ce) {
			aside = fmt.Sprintf(" (the cached calibration was unreadable and is moved to %s)", ce.SetAside)
		} else {
			aside = fmt.Sprintf(" (the cached calibration could not be read: %v)", err)
		}
	}
	if p, ok := shipped(info.GPU); ok {
		if p.Name == reference {
			return p, "the course's H200" + aside
		}
		return p, "datasheet estimate for " + info.GPU + aside
	}
	ref, err := devices.Lookup(reference)
	if err != nil {
		return devices.Profile{}, fmt.Sprintf("no profile for %s, and the H200's cannot be read: %v", orUnknown(info.GPU), err)
	}
	return ref, fmt.Sprintf("no profile for %s: the model describes the H200; run coalesce calibrate%s", orUnknown(info.GPU), aside)
}

// shipped returns the shipped profile whose GPU is the one the driver
// names, case and spacing aside. It stands in for the registry's Match
// (the profiles branch), which is to replace it.
func shipped(gpu string) (devices.Profile, bool) {
	want := strings.Join(strings.Fields(strings.ToLower(gpu)), " ")
	if want == "" {
		return devices.Profile{}, false
	}
	for _, name := range devices.Names() {
		p, err := devices.Lookup(name)
		if err == nil && strings.Join(strings.Fields(strings.ToLower(p.GPU)), " ") == want {
			return p, true
		}
	}
	return devices.Profile{}, false
}
