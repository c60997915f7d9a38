package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/coalescing-course/coalesce/cuda/reference"
	"github.com/coalescing-course/coalesce/cuda/toolkit"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

// ModeEnv names the environment variable that picks where the notebooks'
// and the grader's measurements come from (OpenMeasurer).
const ModeEnv = "COALESCE_MEASURE"

// Modes of OpenMeasurer.
const (
	// Auto is live when this machine can measure, else recorded.
	Auto = "auto"
	// LiveMode insists on this machine's GPU.
	LiveMode = "live"
	// StrictMode is LiveMode that also insists on ncu's counters of this
	// GPU (GPU.Strict): no stand-in from the recording or the model. It
	// is for testing the course on a GPU machine (make test-gpu).
	StrictMode = "strict"
	// RecordedMode takes the recording built into the course.
	RecordedMode = "recorded"
	// NoneMode measures nothing.
	NoneMode = "none"
)

// ErrNoMeasurer is a mode that gives no measurements: none, or live on a
// machine that cannot measure, or recorded in a build without the
// recording.
var ErrNoMeasurer = errors.New("no measurement source")

// OpenMeasurer opens where measurements come from: mode "live" (this
// machine's GPU, or an error), "strict" (live, and an error wherever live
// would borrow counters), "recorded" (the recording built into the
// course), "none" (an error wrapping ErrNoMeasurer), or "" and "auto": live
// when this machine can measure, else recorded, with the Origin's Why
// saying what it lacks.
func OpenMeasurer(ctx context.Context, mode string, b Builder) (measure.Measurer, error) {
	recorded := func(why string) (measure.Measurer, error) {
		src, err := reference.Measurer(why)
		if err != nil {
			return nil, fmt.Errorf("cuda: %w: %s, and %v", ErrNoMeasurer, why, err)
		}
		return src, nil
	}
	switch m := strings.ToLower(strings.TrimSpace(mode)); m {
	case RecordedMode:
		return recorded(ModeEnv + "=recorded")
	case NoneMode:
		return nil, fmt.Errorf("cuda: %w: %s=none", ErrNoMeasurer, ModeEnv)
	case LiveMode, StrictMode, "", Auto:
		g, err := OpenGPU(ctx, b)
		if err == nil {
			g.Strict = m == StrictMode
			return g, nil
		}
		if m == LiveMode || m == StrictMode {
			return nil, fmt.Errorf("cuda: %w: %s=%s, but %v", ErrNoMeasurer, ModeEnv, m, err)
		}
		var missing *toolkit.MissingError
		if errors.As(err, &missing) {
			return recorded("no GPU here: " + missing.Detail)
		}
		return recorded(fmt.Sprintf("the GPU could not be used: %v", err))
	}
	return nil, fmt.Errorf("cuda: %w: %s=%q: want live, strict, recorded, auto or none", ErrNoMeasurer, ModeEnv, mode)
}
