package calibrate

import (
	"errors"
	"fmt"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

// CalibratedName is the name a calibration of gpu takes among the
// profiles (devices.Register): the name of the shipped profile the
// driver's name matches, or else Slug(gpu), with "-calibrated":
// "l4-calibrated", "nvidia-geforce-rtx-5090-calibrated". A shipped name
// is never taken (Register refuses it), so "l4" keeps the datasheet's
// numbers and a spec can ask for either.
func CalibratedName(gpu string) string {
	if p, ok := devices.Match(gpu); ok {
		return p.Name + "-calibrated"
	}
	return Slug(gpu) + "-calibrated"
}

// Choose picks the profile the model should use for the GPU info
// describes, and says why, in words for the learner:
//
//   - a calibration of this GPU in the cache: "calibrated on this NVIDIA
//     GeForce RTX 4090, 2026-12-01";
//   - else the profile whose match names the GPU (devices.Match):
//     "this machine's NVIDIA L4, by its name" (its Estimated lists what
//     is a datasheet's estimate), or for the H200 "the course's H200,
//     this machine's GPU";
//   - else the H200's, with what to do about it.
//
// A calibration of another configuration (the SMs or the L2 differ: a MIG
// slice, say) is passed over, and an unreadable one is moved aside; the
// reason says so.
func Choose(info measure.DeviceInfo) (devices.Profile, string) {
	p, why, _ := choose(info)
	return p, why
}

// choose is Choose, and says whether the profile is a calibration from
// the cache, which the registry does not know yet.
func choose(info measure.DeviceInfo) (p devices.Profile, why string, cached bool) {
	var aside string
	switch c, ok, err := Cached(info.GPU); {
	case ok && c.SMs == info.SMs && c.L2Bytes == info.L2Bytes:
		return c.Profile, fmt.Sprintf("calibrated on this %s, %s", info.GPU, c.Calibrated), true
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
	if p, ok := devices.Match(info.GPU); ok {
		if p.Name == devices.Course {
			return p, "the course's H200, this machine's GPU" + aside, false
		}
		return p, fmt.Sprintf("this machine's %s, by its name%s", info.GPU, aside), false
	}
	ref, err := devices.Lookup(devices.Course)
	if err != nil {
		return devices.Profile{}, fmt.Sprintf("no profile for %s, and the H200's cannot be read: %v", orUnknown(info.GPU), err), false
	}
	return ref, fmt.Sprintf("no profile for %s: the model describes the H200; run coalesce calibrate%s", orUnknown(info.GPU), aside), false
}

// Adopt makes the profile Choose picks for the GPU info describes the one
// a spec without "device" gets (devices.Use), registering a calibration
// from the cache first (devices.Register), and returns it and why. The
// notebooks (lab) and coalesce's commands that measure live call it once,
// when they open the GPU: devices.Current then says what lab.Status
// prints.
func Adopt(info measure.DeviceInfo) (devices.Profile, string, error) {
	p, why, cached := choose(info)
	if cached {
		if err := devices.Register(p); err != nil {
			return devices.Profile{}, "", fmt.Errorf("calibrate: the calibration of %s: %w", info.GPU, err)
		}
	}
	if err := devices.Use(p.Name, why); err != nil {
		return devices.Profile{}, "", fmt.Errorf("calibrate: %w", err)
	}
	return p, why, nil
}

// AdoptGPU makes the model describe the GPU that measures: g, a live GPU,
// gets the profile Adopt chooses for its device; nil (measurements
// recorded, read from a run file, or none) gets the course's H200, the
// GPU of the recording (devices.Course, devices.CourseWhy). It returns the
// profile and why. The notebooks (lab) call it whenever they open where
// their measurements come from, and coalesce compare and grade -measure
// live when they open theirs: the choice is made here only.
func AdoptGPU(g *cuda.GPU) (devices.Profile, string, error) {
	if g != nil {
		return Adopt(g.Info)
	}
	if err := devices.Use(devices.Course, devices.CourseWhy); err != nil {
		return devices.Profile{}, "", fmt.Errorf("calibrate: %w", err)
	}
	p, err := devices.Lookup(devices.Course)
	if err != nil {
		return devices.Profile{}, "", fmt.Errorf("calibrate: %w", err)
	}
	return p, devices.CourseWhy, nil
}
