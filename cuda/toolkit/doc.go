// Package toolkit finds and runs the external tools the course measures
// with: nvcc (the CUDA compiler), ncu (Nsight Compute), compute-sanitizer
// and nvidia-smi. The harness (package cuda) and a learner's kernel
// (package cuda/usercuda) both go through it, so that each tool is looked
// up once, run one way, and read one way.
//
// Each tool is a small type with the path it was found at and a method per
// command line the course runs (Nvcc.BuildCmd, Ncu.ProfileCmd,
// Sanitizer.CheckCmd, ...). A command line is an Invocation: run under a
// context with a timeout, interrupted and then killed when it overruns,
// with its whole process group when Group is set (ncu and
// compute-sanitizer run the real program as their child), its standard
// error kept in the error:
//
//	nvcc, err := toolkit.FindNvcc() // a *MissingError without it
//	out, err := nvcc.VersionCmd().Run(ctx)
//	// err: a *ToolError (exit status, stderr, timeout) or a *StartError
//
// A missing tool is a *MissingError that says what to install, or to use
// the recorded reference; errors.Is tells which (ErrNoNvcc, ErrNoNcu,
// ErrNoSanitizer, ErrNoDriver, ErrNoGPU). Each tool's executable can be
// named by an environment variable instead of the PATH (NvccEnv, NcuEnv,
// SanitizerEnv, SmiEnv), for a toolkit off the PATH and for tests that
// must see a machine without one.
//
// What ncu prints is read here too: its CSV of metrics (ParseNcuCSV), its
// own diagnostics (NcuDiagnostics), and its refusal of a GPU's counters
// (CountersDeniedIn, a *CountersDeniedError whose message ends with the
// host setting that lets it count, CountersRemedy). Errors keep the
// "cuda: " prefix the course has always printed for them.
package toolkit
