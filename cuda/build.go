package cuda

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// sources holds the harness's CUDA sources (src/), built into every binary
// of the course so that a harness can be compiled wherever nvcc is.
//
//go:embed src
var sources embed.FS

// SharedHeader is src/shared.cuh: the host code that the harness and a
// learner's kernel's program share (the exit statuses, Failure, the plan's
// reader, the L2 flush and the timing loop). Package usercuda inlines it
// into every learner's program, so that this one copy serves both builds.
//
//go:embed src/shared.cuh
var SharedHeader string

// CacheEnv names the environment variable that overrides the cache directory.
const CacheEnv = "COALESCE_CACHE"

// CacheDir returns where built harnesses are kept: $COALESCE_CACHE, or
// coalesce/ under the user's cache directory (~/.cache on Linux).
func CacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cuda: no cache directory (set %s): %w", CacheEnv, err)
	}
	return filepath.Join(d, "coalesce"), nil
}

// Harness is a built harness executable.
type Harness struct {
	Path string   // the executable, inside the cache directory
	Key  string   // content hash it was built for
	Arch []string // the architecture flags it was built with
	Nvcc string   // nvcc --version, its last line
}

// Builder builds the harness once per content: the hash of its sources, the
// nvcc version and the flags names a file in the cache directory, so a
// second build of the same sources with the same compiler is a file lookup.
// The zero value builds with nvcc from the PATH into CacheDir().
type Builder struct {
	Nvcc     toolkit.Nvcc  // zero: FindNvcc
	CacheDir string        // "": CacheDir()
	Timeout  time.Duration // for each nvcc run; 0: 5 minutes
	Sources  fs.FS         // nil: the embedded harness sources
	Log      io.Writer     // where to say that a build is happening; nil: nowhere
	// Smi names the GPU's compute capability when -arch=native fails;
	// zero: FindSmi, and a fat build when there is none.
	Smi toolkit.Smi
}

// harnessKey returns the content hash of a harness built from srcs by the nvcc
// whose --version printed version, with arch.
func harnessKey(srcs fs.FS, version string, arch []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "coalesce harness v1\x00")
	var names []string
	err := fs.WalkDir(srcs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("cuda: reading harness sources: %w", err)
	}
	slices.Sort(names)
	for _, n := range names {
		data, err := fs.ReadFile(srcs, n)
		if err != nil {
			return "", fmt.Errorf("cuda: reading harness sources: %w", err)
		}
		fmt.Fprintf(h, "file %s %d\x00", n, len(data))
		h.Write(data)
	}
	fmt.Fprintf(h, "nvcc %s\x00flags %s\x00arch %s\x00", version, strings.Join(toolkit.BuildFlags(), " "), strings.Join(arch, " "))
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// Build returns the harness for the sources, building it if the cache does
// not hold it yet. It tries toolkit.ArchNative() first; when nvcc cannot build for
// the local GPU, the compute capability nvidia-smi names (archFor), then
// toolkit.ArchFat().
func (b Builder) Build(ctx context.Context) (*Harness, error) {
	nv := b.Nvcc
	if nv.Path == "" {
		var err error
		if nv, err = toolkit.FindNvcc(); err != nil {
			return nil, err
		}
	}
	srcs := b.Sources
	if srcs == nil {
		sub, err := fs.Sub(sources, "src")
		if err != nil {
			return nil, err
		}
		srcs = sub
	}
	dir := b.CacheDir
	if dir == "" {
		var err error
		if dir, err = CacheDir(); err != nil {
			return nil, err
		}
	}
	timeout := b.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	out, err := nv.VersionCmd().Run(ctx)
	if err != nil {
		return nil, fmt.Errorf("cuda: asking nvcc its version: %w", err)
	}
	version := strings.TrimSpace(string(out))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cuda: harness cache: %w", err)
	}
	var failures []error
	for _, arch := range [][]string{toolkit.ArchNative(), b.smiArch(ctx), toolkit.ArchFat()} {
		if arch == nil {
			continue
		}
		key, err := harnessKey(srcs, version, arch)
		if err != nil {
			return nil, err
		}
		h := &Harness{Path: filepath.Join(dir, "harness-"+key), Key: key, Arch: arch, Nvcc: versionLine(version)}
		if fi, err := os.Stat(h.Path); err == nil && fi.Mode().IsRegular() {
			return h, nil
		}
		if b.Log != nil {
			fmt.Fprintf(b.Log, "cuda: building the harness with nvcc %s into %s\n", strings.Join(arch, " "), h.Path)
		}
		if err := b.compile(ctx, nv, srcs, dir, h, timeout); err != nil {
			failures = append(failures, err)
			continue
		}
		return h, nil
	}
	return nil, fmt.Errorf("cuda: building the harness failed for every architecture: %w", errors.Join(failures...))
}

// smiArch returns the flags for the GPU nvidia-smi names, the first when
// there are several (the harness runs on device 0); nil when it names none.
func (b Builder) smiArch(ctx context.Context) []string {
	smi := b.Smi
	if smi.Path == "" {
		var err error
		if smi, err = toolkit.FindSmi(); err != nil {
			return nil
		}
	}
	out, err := smi.ComputeCapCmd().Run(ctx)
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	arch, err := toolkit.ArchFor(first)
	if err != nil {
		return nil
	}
	return arch
}

// compile writes the sources to a temporary directory, builds them into a
// temporary file beside the final one and renames it into place, so that a
// harness in the cache is always a complete one, even when two builds race.
func (b Builder) compile(ctx context.Context, nv toolkit.Nvcc, srcs fs.FS, dir string, h *Harness, timeout time.Duration) error {
	work, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return fmt.Errorf("cuda: harness cache: %w", err)
	}
	defer os.RemoveAll(work)
	if err := os.CopyFS(work, srcs); err != nil {
		return fmt.Errorf("cuda: writing harness sources: %w", err)
	}
	tmp := filepath.Join(work, "harness")
	var stderr strings.Builder
	inv := nv.BuildCmd(work, "harness.cu", tmp, h.Arch, timeout)
	inv.Stderr = &stderr
	if _, err := inv.Run(ctx); err != nil {
		return err
	}
	// Without a GPU to look at, nvcc -arch=native warns and builds for a
	// default architecture instead; such a harness would run none of the
	// target's own instructions, so it counts as a failed build.
	if strings.Contains(stderr.String(), "Cannot find valid GPU") {
		return fmt.Errorf("cuda: nvcc %s: %s", strings.Join(h.Arch, " "), strings.TrimSpace(stderr.String()))
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("cuda: harness cache: %w", err)
	}
	if err := os.Rename(tmp, h.Path); err != nil {
		return fmt.Errorf("cuda: harness cache: %w", err)
	}
	return nil
}

// versionLine picks the line of a --version text that names the release.
func versionLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "release") || strings.Contains(l, "Version") {
			return strings.TrimSpace(l)
		}
	}
	return lastLine(s)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}
