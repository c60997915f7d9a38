package calibrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coalescing-course/coalesce/cuda"
	"github.com/coalescing-course/coalesce/internal/atomicfile"
	"github.com/coalescing-course/coalesce/lessons/devices"
)

// Calibration is a profile coalesce calibrate fitted, as it is cached: the
// profile's own fields, among them each field's source by its JSON path
// ("measured on NVIDIA H200 by coalesce calibrate, 2026-12-01: ...", or
// "estimated: ..." for one no measurement gave, also listed in
// Estimated), and the date of the measurements.
type Calibration struct {
	devices.Profile
	// Calibrated is the date of the measurements (YYYY-MM-DD).
	Calibrated string `json:"calibrated"`
}

// Slug turns a GPU's name into a file and profile name: "NVIDIA GeForce
// RTX 4090" is "nvidia-geforce-rtx-4090".
func Slug(gpu string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(gpu) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// profilesDir is where calibrations are cached, beside the harnesses.
func profilesDir() (string, error) {
	d, err := cuda.CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "profiles"), nil
}

// CachePath returns the file a calibration of gpu is cached in:
// <cuda.CacheDir()>/profiles/<Slug(gpu)>.json.
func CachePath(gpu string) (string, error) {
	if Slug(gpu) == "" {
		return "", fmt.Errorf("calibrate: GPU name %q: want one with a letter or digit", gpu)
	}
	d, err := profilesDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, Slug(gpu)+".json"), nil
}

// Save writes c to its GPU's cache file, atomically: a reader sees the old
// file or the new one, never half of one. It returns the path.
func Save(c Calibration) (string, error) {
	if err := c.Validate(); err != nil {
		return "", fmt.Errorf("calibrate: not caching an invalid profile: %w", err)
	}
	path, err := CachePath(c.GPU)
	if err != nil {
		return "", err
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return "", fmt.Errorf("calibrate: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("calibrate: profile cache: %w", err)
	}
	if err := atomicfile.WriteBytes(path, 0o600, append(data, '\n')); err != nil {
		return "", fmt.Errorf("calibrate: profile cache: %w", err)
	}
	return path, nil
}

// CorruptError is a cached calibration that could not be read: it has
// been moved aside to SetAside, so the next calibration starts clean.
type CorruptError struct {
	Path, SetAside string
	Err            error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("calibrate: the cached calibration %s is unreadable (%v); moved it to %s: run coalesce calibrate again", e.Path, e.Err, e.SetAside)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// Cached returns the calibration of gpu from the cache; ok is false when
// there is none. A file that does not hold a valid profile of gpu is moved
// aside (to the same name with .corrupt) and reported as a *CorruptError.
func Cached(gpu string) (c Calibration, ok bool, err error) {
	path, err := CachePath(gpu)
	if err != nil {
		return Calibration{}, false, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Calibration{}, false, nil
	}
	if err != nil {
		return Calibration{}, false, fmt.Errorf("calibrate: %w", err)
	}
	if err := decode(data, gpu, &c); err != nil {
		aside := path + ".corrupt"
		if rerr := os.Rename(path, aside); rerr != nil {
			return Calibration{}, false, fmt.Errorf("calibrate: the cached calibration %s is unreadable (%v), and could not be moved aside: %w", path, err, rerr)
		}
		return Calibration{}, false, &CorruptError{Path: path, SetAside: aside, Err: err}
	}
	return c, true, nil
}

// decode reads a cached calibration strictly: no unknown field, a valid
// profile, and the GPU the file is named for.
func decode(data []byte, gpu string, c *Calibration) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the profile")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	if c.GPU != gpu {
		return fmt.Errorf("a profile of %q, want %q", c.GPU, gpu)
	}
	return nil
}
