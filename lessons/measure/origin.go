package measure

import (
	"time"
)

// Kind is how measurements were obtained.
type Kind int

// The kinds of origin.
const (
	// Live measurements ran on this machine's GPU just now.
	Live Kind = iota + 1
	// Recorded measurements were made earlier, on the GPU the provenance
	// names, and built into the course.
	Recorded
	// FromFile measurements were read from a run file.
	FromFile
)

// Origin says where a Set's measurements come from. Its String is the
// label every table, chart and verdict shows; Why says, for measurements
// that are not live, why they are not.
type Origin struct {
	Kind Kind
	// GPU is the name the driver gives the GPU ("NVIDIA H200"); "" when a
	// file does not say.
	GPU string
	// When is when the measurements were made: now for live ones, the
	// provenance's date for the others; zero when not known.
	When time.Time
	// File is the run file read, for FromFile.
	File string
	// Why says why the measurements are not live: what this machine
	// lacks, or that they were asked for.
	Why string
}

// String is the label:
//
//	live: NVIDIA H200, 2026-12-01 14:03 UTC
//	recorded on NVIDIA H200, 2026-11-29
//	recorded on NVIDIA H200, 2026-11-29 (results.jsonl)
//	measured in results.jsonl (no provenance)
func (o Origin) String() string {
	switch o.Kind {
	case Live:
		return "live: " + o.GPU + ", " + o.When.UTC().Format("2006-01-02 15:04 UTC")
	case Recorded:
		return "recorded on " + o.GPU + ", " + o.When.UTC().Format(time.DateOnly)
	case FromFile:
		if o.GPU == "" {
			return "measured in " + o.File + " (no provenance)"
		}
		return "recorded on " + o.GPU + ", " + o.When.UTC().Format(time.DateOnly) + " (" + o.File + ")"
	}
	return "no measurement"
}

// Caption is the label with the reason it is not live, for the line
// above a table: "recorded on NVIDIA H200, 2026-11-29 (no GPU here: ...)".
func (o Origin) Caption() string {
	if o.Why == "" {
		return o.String()
	}
	return o.String() + " (" + o.Why + ")"
}
