package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	coalesce "github.com/coalescing-course/coalesce"
)

// CourseModule is the course's module path.
const CourseModule = "github.com/coalescing-course/coalesce"

// DefaultGradePackage is the package whose Observe the child calls:
// Observe(id, learner string, kernel, order any) T, with T JSON
// (lessons/exercises: its Observation).
const DefaultGradePackage = CourseModule + "/lessons/exercises"

// The defaults of Config's limits.
const (
	// DefaultBuildTimeout bounds one go build of a kernel: about a second
	// once the course's packages are in the sandbox's cache.
	DefaultBuildTimeout = time.Minute
	// DefaultRunTimeout bounds a run's wall clock, and its CPU time.
	DefaultRunTimeout = 30 * time.Second
	// DefaultMemory is the child's address space beyond what the Go
	// runtime has reserved when main starts (RLIMIT_AS: 1.2 GB at
	// start, go1.26.8 linux/amd64, mostly reservations it never touches);
	// the heap's soft limit (debug.SetMemoryLimit) is half of it.
	DefaultMemory = 2 << 30
	// DefaultBuildMemory is the address space of go build and of each
	// compile and link it runs (RLIMIT_AS), reservations included: 1.2 GB
	// of each is reserved at start; the course's command builds in 2 GB.
	DefaultBuildMemory = 4 << 30
	// DefaultBuildFileSize is the largest file a build may write
	// (RLIMIT_FSIZE, on go build and every compile and link): a kernel's
	// compiled package is tens of kilobytes and the child about 5 MB; a
	// huge constant is refused as it is written, never reaching a cache.
	DefaultBuildFileSize = 64 << 20
	// DefaultMaxBuildCache is the most one build may add to its cache,
	// counted after it: over it, the kernel is refused.
	DefaultMaxBuildCache = 128 << 20
	// DefaultMaxBaseCache bounds the sandbox's cache of the course's and
	// the standard library's compiled packages (about 55 MB for one
	// version of the course): past it, the cache is emptied and built
	// again.
	DefaultMaxBaseCache = 1 << 30
	// DefaultMaxBinaries bounds the children kept for reuse (about 5 MB
	// each): the least recently used go first.
	DefaultMaxBinaries = 512 << 20
	// DefaultMaxOutput is how much of the child's stdout, and of its
	// stderr, is kept; the rest is read and dropped.
	DefaultMaxOutput = 64 << 10
	// MaxReport is the largest report read, in bytes (the child's file
	// size limit, RLIMIT_FSIZE): an observation holds the outputs' bytes,
	// 3.2 MB of JSON for the largest variant of the course's exercises.
	MaxReport = 16 << 20
)

// The kinds of error Run returns for the learner's code, for errors.Is;
// each comes as an *Error saying what happened. Any other error is the
// grading machine's (no go command, a course that does not build, a
// context done) and says nothing of the kernel.
var (
	// ErrRefused is a source the static vetting refuses (see Vet): never
	// built.
	ErrRefused = errors.New("sandbox: refused")
	// ErrCompile is a source the Go compiler refuses, or whose build ran
	// past a limit (time, memory, file size, cache); Msg says which, with
	// the compiler's messages at the kernel's lines.
	ErrCompile = errors.New("sandbox: does not compile")
	// ErrTimeout is a child killed at the wall-clock or CPU limit.
	ErrTimeout = errors.New("sandbox: time limit")
	// ErrMemory is a child that ran out of its memory limit.
	ErrMemory = errors.New("sandbox: memory limit")
	// ErrStack is a child whose stack grew past its limit: unbounded
	// recursion.
	ErrStack = errors.New("sandbox: stack overflow")
	// ErrCrashed is a child that died otherwise: a fatal error of the
	// runtime, a signal, an exit status other than 0.
	ErrCrashed = errors.New("sandbox: crashed")
	// ErrNoReport is a child that exited 0 without a report, or with one
	// that is not a JSON object of at most MaxReport bytes.
	ErrNoReport = errors.New("sandbox: no report")
)

// Error is the learner's code refused or failed, of a kind Err (one of
// the Err variables above).
type Error struct {
	Err error
	// Line is the kernel source's line at fault, 0 when none is.
	Line int
	// Msg says what happened, in the sandbox's words; Detail is what the
	// learner's code made of it, "" when nothing: the compiler's messages,
	// which quote the code, or the first line of a crash, which the code
	// may have printed. A caller writing Detail where others read it
	// neutralises it.
	Msg, Detail string
	// Output is the end of the child's stderr, or the compiler's output,
	// temporary paths removed; "" when none.
	Output string

	timedOut bool // a build that ran out of time: a busy machine's, perhaps
}

func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Line > 0 {
		s += fmt.Sprintf(": line %d", e.Line)
	}
	for _, part := range []string{e.Msg, e.Detail} {
		if part != "" {
			s += ": " + part
		}
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// Kernel is a learner's kernel to grade: the source of its declarations
// (imports, funcs, types, consts; no package clause), the func in it that
// is the kernel, the exercise id and the learner. Order, when set, names
// the func of a gather's host step that orders its keys: the child passes
// it to Observe beside the kernel.
type Kernel struct {
	Exercise, Learner string
	Source            string
	Func              string
	Order             string
}

// Result is what a child reported.
type Result struct {
	// Report is the JSON object Observe returned, as the child wrote it:
	// an observation, which the caller judges.
	Report json.RawMessage
	// Stdout and Stderr are the first Config.MaxOutput bytes the child
	// printed (the learner's code may print); Dropped counts the rest.
	Stdout, Stderr []byte
	Dropped        int64
	// Network says how the child was kept off the network.
	Network string
	// Build and Run are the wall-clock times of the two steps; Reused
	// says the child was one built before for the same source (Build is
	// then the time spent finding it).
	Build, Run time.Duration
	Reused     bool
	// CacheGrowth is what the build added to its cache, in bytes, before
	// the cache was removed (0 when Reused).
	CacheGrowth int64
}

// Config says where the course is and what limits the child gets. Its
// zero value is the defaults.
type Config struct {
	// Course is the course's source, rooted at the module's root (paths
	// are import paths less CourseModule/); nil is coalesce.Source, the
	// copy built into this binary.
	Course fs.FS
	// GradePackage is the import path of the package whose Observe the
	// child calls; "" is DefaultGradePackage.
	GradePackage string
	// Go is the go command; "" is go on PATH, else GOROOT's.
	Go string
	// CacheDir is the sandbox's own directory: the compiled course and
	// standard library (go-build, a Go build cache no learner code writes
	// to), the children kept for reuse (bin) and each batch's directory
	// while it runs (batch-*). "" is $COALESCE_SANDBOX_DIR, else
	// coalesce/sandbox in the user's cache directory (os.UserCacheDir),
	// else (none, or not writable) in the temporary directory. The user's
	// own Go caches are never used.
	CacheDir string
	// Workers bounds the builds and runs at once; 0 is the machine's
	// cores, fewer where its memory would not hold that many children at
	// their limits.
	Workers int
	// BuildTimeout and RunTimeout bound a build and a run; CPU the run's
	// CPU time (RLIMIT_CPU, whole seconds, at least 1); Memory the
	// address space it may map, in bytes, beyond what the runtime has at
	// start (see DefaultMemory); MaxOutput what is kept of stdout and of
	// stderr. Zero is the default of each.
	BuildTimeout, RunTimeout, CPU time.Duration
	Memory                        int64
	MaxOutput                     int
	// BuildMemory is the address space of go build and of each compiler
	// and linker it runs; BuildFileSize the largest file any of them may
	// write; MaxBuildCache what one build may add to its cache; all in
	// bytes, 0 the default.
	BuildMemory, BuildFileSize, MaxBuildCache int64
	// MaxBaseCache and MaxBinaries bound CacheDir's compiled packages and
	// kept children, in bytes; 0 the default.
	MaxBaseCache, MaxBinaries int64
}

func (c Config) filled() Config {
	if c.Course == nil {
		c.Course = coalesce.Source
	}
	if c.GradePackage == "" {
		c.GradePackage = DefaultGradePackage
	}
	c.BuildTimeout = or(c.BuildTimeout, DefaultBuildTimeout)
	c.RunTimeout = or(c.RunTimeout, DefaultRunTimeout)
	c.CPU = max(time.Second, or(c.CPU, c.RunTimeout))
	c.Memory = or(c.Memory, DefaultMemory)
	c.MaxOutput = or(c.MaxOutput, DefaultMaxOutput)
	c.BuildMemory = or(c.BuildMemory, DefaultBuildMemory)
	c.BuildFileSize = or(c.BuildFileSize, DefaultBuildFileSize)
	c.MaxBuildCache = or(c.MaxBuildCache, DefaultMaxBuildCache)
	c.MaxBaseCache = or(c.MaxBaseCache, DefaultMaxBaseCache)
	c.MaxBinaries = or(c.MaxBinaries, DefaultMaxBinaries)
	if c.Go == "" {
		c.Go = goCommand()
	}
	if c.CacheDir == "" {
		c.CacheDir = defaultCacheDir()
	}
	if c.Workers <= 0 {
		c.Workers = defaultWorkers(c)
	}
	return c
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// CacheDirEnv names the environment variable that sets the default of
// Config.CacheDir.
const CacheDirEnv = "COALESCE_SANDBOX_DIR"

// defaultCacheDir is $COALESCE_SANDBOX_DIR, or coalesce/sandbox in the
// user's cache directory, or in the temporary directory where there is
// none (no HOME) or it cannot be made.
func defaultCacheDir() string {
	if d := os.Getenv(CacheDirEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		d = filepath.Join(d, "coalesce", "sandbox")
		if os.MkdirAll(d, 0o700) == nil {
			return d
		}
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("coalesce-sandbox-%d", os.Getuid()))
}

// defaultWorkers is the machine's cores, or fewer: as many children at
// their memory limit, and half as many builds at theirs, as half the
// machine's memory holds.
func defaultWorkers(c Config) int {
	n := runtime.NumCPU()
	if total := memTotal(); total > 0 {
		per := c.Memory + c.BuildMemory/2
		n = min(n, max(1, int(total/2/per)))
	}
	return max(1, n)
}

// memTotal is the machine's memory in bytes (/proc/meminfo), 0 when it
// cannot be read.
func memTotal() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	var kb int64
	if _, err := fmt.Sscanf(string(data), "MemTotal: %d kB", &kb); err != nil {
		return 0
	}
	return kb << 10
}
