package toolkit

import (
	"strconv"
	"sync"
	"time"
)

// SanitizerEnv names the environment variable that names
// compute-sanitizer's executable instead of the PATH lookup.
const SanitizerEnv = "COALESCE_COMPUTE_SANITIZER"

var lookSanitizer = sync.OnceValues(func() (string, error) { return lookTool("compute-sanitizer", SanitizerEnv) })

// Sanitizer is compute-sanitizer, the CUDA toolkit's checker of memory
// accesses (memcheck) and shared-memory races (racecheck).
type Sanitizer struct{ Path string }

// FindSanitizer returns compute-sanitizer from the PATH, or a
// *MissingError wrapping ErrNoSanitizer.
func FindSanitizer() (Sanitizer, error) {
	p, err := lookSanitizer()
	if err != nil {
		return Sanitizer{}, missingTool(err, ErrNoSanitizer, "the CUDA toolkit (compute-sanitizer comes with it)")
	}
	return Sanitizer{Path: p}, nil
}

// Check names a compute-sanitizer tool a learner's kernel can run under.
type Check string

// The checks: memcheck finds out-of-bounds and misaligned accesses to
// global, local and shared memory; racecheck finds shared-memory hazards
// (a missing __syncthreads()).
const (
	Memcheck  Check = "memcheck"
	Racecheck Check = "racecheck"
)

// SanitizerExit is the status compute-sanitizer exits with when it found
// errors (--error-exitcode), so that they are told from the program's own.
const SanitizerExit = 86

// maxFindings is how many findings compute-sanitizer prints
// (--print-limit): the first are what a learner reads.
const maxFindings = 20

// CheckCmd runs program under the check.
func (s Sanitizer) CheckCmd(c Check, program string, args []string, timeout time.Duration) Invocation {
	a := []string{"--tool", string(c), "--error-exitcode", strconv.Itoa(SanitizerExit), "--print-limit", strconv.Itoa(maxFindings), program}
	return Invocation{Tool: "compute-sanitizer", Path: s.Path, Args: append(a, args...), Timeout: timeout, Group: true}
}
