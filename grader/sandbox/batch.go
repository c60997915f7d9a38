package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coalescing-course/coalesce/units"
)

// A Batch grades kernels against one copy of the course's source, with
// one set of limits, until Close: what an instructor's `coalesce grade
// -kernels` opens once for the class. Its Run may be called from many
// goroutines; at most Config.Workers builds and runs go at once.
//
// NewBatch does what every kernel of the batch needs before the first:
// it writes the course's source into the batch's directory, builds the
// standard library and the course's packages into the sandbox's base
// cache (once per version of the course and of Go; a second or two when
// they are there), and builds and runs a probe child. Whatever fails
// there is the grading machine's, and stops the batch with an error that
// says what: no go command, a source without a package, limits the
// system refuses. Never a class of silent zeros.
type Batch struct {
	cfg    Config
	self   string // this program's binary: the helper
	dir    string // the batch's directory, removed by Close
	course string // the course's source in it
	key    string // what every child of the batch is built from, hashed
	goEnv  []string
	lock   *os.File

	slots  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	seq    atomic.Int64
	closed atomic.Bool

	mu       sync.Mutex
	builds   map[string]*build
	binBytes int64 // of the children in builds

	stats struct {
		builds, reused, runs atomic.Int64
		maxGrowth            atomic.Int64
	}
	warm     time.Duration
	baseSize int64
}

// build is one child, built once for every kernel of the same source.
type build struct {
	done chan struct{}
	bin  string
	err  error
	res  Result // Build, CacheGrowth
	// users are the Runs using it; used when the last was done; size its
	// bytes (b.mu guards all three).
	users int
	used  time.Time
	size  int64
}

// Stats are what a batch did, for an instructor's figures.
type Stats struct {
	// Builds is the children built; Reused those found built (in this
	// batch, or kept from an earlier one); Runs the kernels run.
	Builds, Reused, Runs int64
	// MaxBuildGrowth is the most one build added to its cache, in bytes.
	MaxBuildGrowth int64
	// Warm is the time NewBatch took to make the base cache ready;
	// BaseCache its size then, in bytes.
	Warm      time.Duration
	BaseCache int64
	// Dir is the batch's directory (removed by Close), CacheDir the
	// sandbox's.
	Dir, CacheDir string
}

// Stats returns what the batch did so far.
func (b *Batch) Stats() Stats {
	return Stats{Builds: b.stats.builds.Load(), Reused: b.stats.reused.Load(), Runs: b.stats.runs.Load(),
		MaxBuildGrowth: b.stats.maxGrowth.Load(), Warm: b.warm, BaseCache: b.baseSize, Dir: b.dir, CacheDir: b.cfg.CacheDir}
}

// probe is the kernel NewBatch builds and runs to check the machine: the
// child's code paths, its limits and its report, whatever the grade
// package makes of a kernel that is no exercise's.
var probe = Kernel{Exercise: "sandbox/probe", Learner: "", Source: "func probe() {}\n", Func: "probe"}

// NewBatch opens a batch (see Batch).
func NewBatch(ctx context.Context, c Config) (*Batch, error) {
	c = c.filled()
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox: this program's own binary, which starts each build and child with its limits: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(c.CacheDir, binDir), 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: the sandbox's directory: %w", err)
	}
	goEnv, version, err := goEnvOf(ctx, c.Go)
	if err != nil {
		return nil, err
	}
	files, err := courseFiles(c.Course, c.GradePackage, SimtPath)
	if err != nil {
		return nil, err
	}
	sweepBatches(c.CacheDir)
	dir, err := os.MkdirTemp(c.CacheDir, "batch-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	lock, err := lockFile(filepath.Join(dir, lockName), syscall.LOCK_EX)
	if err != nil {
		_ = removeAll(dir)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	b := &Batch{cfg: c, self: self, dir: dir, course: filepath.Join(dir, "course"), goEnv: goEnv, lock: lock,
		slots: make(chan struct{}, c.Workers), builds: map[string]*build{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	fail := func(err error) (*Batch, error) {
		b.Close()
		return nil, err
	}
	sum, err := writeCourse(b.course, files)
	if err != nil {
		return fail(err)
	}
	h := sha256.New()
	// The build's limits too: a source refused at one (a compiler out of
	// memory) is kept refused for it alone.
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%q\x00%d\x00%d\x00%d\x00%d\x00", sum, version, c.GradePackage, childTemplate, buildFlags,
		c.Memory, int64(c.CPU.Seconds()), c.BuildMemory, c.BuildFileSize)
	b.key = hex.EncodeToString(h.Sum(nil))
	start := time.Now()
	if err := b.warmBase(ctx); err != nil {
		return fail(err)
	}
	b.warm = time.Since(start)
	b.baseSize = treeSize(filepath.Join(c.CacheDir, baseDir), false)
	trimBinaries(filepath.Join(c.CacheDir, binDir), c.MaxBinaries)
	res, err := b.Run(ctx, probe)
	switch {
	case err != nil:
		return fail(fmt.Errorf("sandbox: the probe kernel, which checks the grading machine, failed: %w", err))
	case !json.Valid(res.Report):
		return fail(fmt.Errorf("sandbox: the probe kernel's report is not JSON: %.200s", res.Report))
	}
	return b, nil
}

// warmBase builds the probe child straight into the base cache: the
// standard library and the course's packages, no learner code. Under the
// base's lock, so that two batches starting at once build it once; past
// MaxBaseCache, the base is emptied first.
func (b *Batch) warmBase(ctx context.Context) error {
	base := filepath.Join(b.cfg.CacheDir, baseDir)
	lock, err := lockFile(base+".lock", syscall.LOCK_EX)
	if err != nil {
		return fmt.Errorf("sandbox: locking the base cache: %w", err)
	}
	defer lock.Close()
	if size := treeSize(base, false); size > b.cfg.MaxBaseCache {
		if err := removeAll(base); err != nil {
			return fmt.Errorf("sandbox: emptying the base cache (%s, over its %s): %w", units.BinaryBytes.Format(float64(size)), units.BinaryBytes.Format(float64(b.cfg.MaxBaseCache)), err)
		}
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	dir := filepath.Join(b.dir, "warm")
	if err := b.writeChild(dir, probe); err != nil {
		return err
	}
	// The course and the standard library build in parallel here (the
	// probe is the batch's only build yet), under the build's limits; its
	// time limit covers a cold cache: about 20 s of CPU.
	_, err = b.goBuild(ctx, dir, base, 0, max(b.cfg.BuildTimeout, 10*time.Minute))
	var e *Error
	if errors.As(err, &e) {
		return fmt.Errorf("sandbox: building the course's packages for the child: %s: %s", e.Msg, e.Output)
	}
	if err != nil {
		return fmt.Errorf("sandbox: building the course's packages for the child: %w", err)
	}
	return removeAll(dir)
}

// Close stops what is running, waits for it and removes the batch's
// directory. The base cache and the kept children stay.
func (b *Batch) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	b.cancel()
	b.wg.Wait()
	err := removeAll(b.dir)
	if b.lock != nil {
		b.lock.Close()
	}
	trimBinaries(filepath.Join(b.cfg.CacheDir, binDir), b.cfg.MaxBinaries)
	if err != nil {
		return fmt.Errorf("sandbox: removing the batch's directory: %w", err)
	}
	return nil
}

// Run grades a learner's kernel: it vets the source (Vet), builds it with
// a generated main (or finds it built), runs it, and returns the report
// the child wrote. What is wrong with the kernel is an *Error (errors.Is
// ErrRefused, ErrCompile, ErrTimeout...); any other error is the grading
// machine's, or ctx's, or the batch's closed.
func (b *Batch) Run(ctx context.Context, k Kernel) (*Result, error) {
	if b.closed.Load() {
		return nil, errors.New("sandbox: the batch is closed")
	}
	b.wg.Add(1)
	defer b.wg.Done()
	ctx, stop := mergeDone(ctx, b.ctx)
	defer stop()
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	if err := Vet(k.Source, k.Func); err != nil {
		return nil, err
	}
	if k.Order != "" {
		if err := Vet(k.Source, k.Order); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	bin, built, done, err := b.child(ctx, k)
	if err != nil {
		return nil, err
	}
	defer done()
	res := &Result{Build: time.Since(start), Reused: built == nil}
	if built != nil {
		res.Build, res.CacheGrowth = built.Build, built.CacheGrowth
	}
	start = time.Now()
	err = b.run(ctx, bin, k, res)
	res.Run = time.Since(start)
	b.stats.runs.Add(1)
	if err != nil {
		return res, err
	}
	return res, nil
}

// child returns the path of k's child: built by this call (with what the
// build took), by another of the batch, or kept from an earlier batch
// (nil Result); and release, to call when done with it. The batch keeps
// its children while they are in use and, beyond, up to half of
// MaxBinaries, the least recently used going first: a class of a
// thousand learners, each with kernels of their own, does not hold a
// thousand children on disk.
func (b *Batch) child(ctx context.Context, k Kernel) (string, *Result, func(), error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00%q\x00%q\x00", b.key, k.Source, k.Func, k.Order)
	key := hex.EncodeToString(h.Sum(nil))
	b.mu.Lock()
	bl, ok := b.builds[key]
	if !ok {
		bl = &build{done: make(chan struct{})}
		b.builds[key] = bl
	}
	bl.users++
	b.mu.Unlock()
	release := func() {
		b.mu.Lock()
		bl.users--
		bl.used = time.Now()
		b.evict()
		b.mu.Unlock()
	}
	if ok {
		select {
		case <-bl.done:
		case <-ctx.Done():
			release()
			return "", nil, nil, ctx.Err()
		}
		if bl.err != nil {
			release()
			return "", nil, nil, bl.err
		}
		b.stats.reused.Add(1)
		return bl.bin, nil, release, nil
	}
	bl.bin = filepath.Join(b.dir, "bin", key)
	_ = os.MkdirAll(filepath.Dir(bl.bin), 0o755)
	var fresh *Result
	kept := filepath.Join(b.cfg.CacheDir, binDir)
	switch {
	case reuseBinary(kept, key, bl.bin):
		b.stats.reused.Add(1)
	case keptRefusal(kept, key) != nil:
		b.stats.reused.Add(1)
		bl.err = keptRefusal(kept, key)
	default:
		fresh = &Result{}
		bl.err = b.buildChild(ctx, k, key, bl.bin, fresh)
		bl.res = *fresh
		keepRefusal(kept, key, bl.err)
		if n := b.stats.builds.Load(); n%32 == 0 {
			trimBinaries(kept, b.cfg.MaxBinaries)
		}
	}
	var size int64
	if info, err := os.Stat(bl.bin); err == nil && bl.err == nil {
		size = info.Size()
	}
	var e *Error
	b.mu.Lock()
	bl.size = size
	if bl.err != nil && !(errors.As(bl.err, &e) && (errors.Is(e, ErrRefused) || errors.Is(e, ErrCompile) && !e.timedOut)) {
		// Not the source's own verdict (a machine's error, a time limit
		// on a busy machine): the next kernel of this source tries again.
		delete(b.builds, key)
	}
	b.binBytes += bl.size
	b.mu.Unlock()
	close(bl.done)
	if bl.err != nil {
		release()
		return "", nil, nil, bl.err
	}
	return bl.bin, fresh, release, nil
}

// evict removes the batch's children not in use, the least recently used
// first, until the rest fit in half of MaxBinaries; b.mu is held.
func (b *Batch) evict() {
	for b.binBytes > b.cfg.MaxBinaries/2 {
		var oldest string
		for key, bl := range b.builds {
			if bl.users > 0 || bl.size == 0 || !isDone(bl.done) {
				continue
			}
			if oldest == "" || bl.used.Before(b.builds[oldest].used) {
				oldest = key
			}
		}
		if oldest == "" {
			return
		}
		bl := b.builds[oldest]
		_ = os.Remove(bl.bin)
		b.binBytes -= bl.size
		delete(b.builds, oldest)
	}
}

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// acquire takes one of the batch's worker slots until release, or fails
// when ctx ends first.
func (b *Batch) acquire(ctx context.Context) (release func(), err error) {
	// A select picks at random among what is ready: a context already
	// done must not be outdrawn by a free slot.
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	select {
	case b.slots <- struct{}{}:
		if err := ctx.Err(); err != nil {
			<-b.slots
			return nil, context.Cause(ctx)
		}
		return func() { <-b.slots }, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// mergeDone returns a context that is ctx, also done when other is.
func mergeDone(ctx, other context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(other, func() { cancel(errors.New("sandbox: the batch was closed")) })
	return ctx, func() { stop(); cancel(nil) }
}

// goEnvOf is the go command's GOROOT and version, checked to be one that
// runs: the child's builds name it, with every other setting their own.
func goEnvOf(ctx context.Context, goCmd string) ([]string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "env", "-json", "GOROOT", "GOVERSION", "GOOS", "GOARCH")
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, strings.TrimSpace(string(exit.Stderr)))
		}
		return nil, "", fmt.Errorf("sandbox: grading kernels needs the go command (%s env): %w; put Go on PATH or name it (Config.Go)", goCmd, err)
	}
	var m map[string]string
	if err := json.Unmarshal(out, &m); err != nil || m["GOROOT"] == "" {
		return nil, "", fmt.Errorf("sandbox: %s env: %q: want GOROOT and GOVERSION", goCmd, out)
	}
	return []string{"GOROOT=" + m["GOROOT"]}, m["GOVERSION"] + " " + m["GOOS"] + "/" + m["GOARCH"], nil
}
