package usercuda

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/cuda/toolkit"
)

// The samples are written from the documented report format, not
// measured (testdata/sanitizer_README.md).
func TestParseSanitizer(t *testing.T) {
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		return string(data)
	}
	t.Run("memcheck: two out-of-bounds writes and the API error they cause", func(t *testing.T) {
		r := parseSanitizer(toolkit.Memcheck, read("sanitizer_memcheck.txt"))
		assert.Equal(t, 3, r.Errors)
		require.Len(t, r.Findings, 3)
		f := r.Findings[0]
		assert.Equal(t, "Invalid __global__ write of size 4 bytes", f.What)
		assert.Equal(t, "kernel.cu", f.File, "the build directory is cut")
		assert.Equal(t, 3, f.Line)
		assert.True(t, f.HasThread)
		assert.Equal(t, Dim3{39, 0, 0}, f.Thread)
		assert.Equal(t, Dim3{3, 0, 0}, f.Block)
		assert.Equal(t, []string{
			"at oob_copy+0x90 in kernel.cu:3",
			"by thread (39,0,0) in block (3,0,0)",
			"Address 0x7f2a4c000fa0 is out of bounds",
			"and is 1 bytes after the nearest allocation at 0x7f2a4c000000 of size 4000 bytes",
		}, f.Details, "the host backtrace is left out")
		assert.Equal(t, Dim3{40, 0, 0}, r.Findings[1].Thread)
		api := r.Findings[2]
		assert.Contains(t, api.What, "Program hit cudaErrorLaunchFailure")
		assert.Empty(t, api.Details)
		assert.False(t, api.HasThread)
		assert.NotContains(t, r.Text, "Host Frame")
		assert.NotContains(t, r.Text, "kernel-build-1234")
		assert.False(t, r.Clean())

		err := &SanitizerError{Kernel: "oob_copy", Report: r}
		assert.Equal(t, "cuda: compute-sanitizer memcheck found 3 error(s) in kernel oob_copy\n"+
			"  kernel.cu:3: Invalid __global__ write of size 4 bytes by thread (39,0,0) in block (3,0,0); Address 0x7f2a4c000fa0 is out of bounds; and is 1 bytes after the nearest allocation at 0x7f2a4c000000 of size 4000 bytes\n"+
			"  kernel.cu:3: Invalid __global__ write of size 4 bytes by thread (40,0,0) in block (3,0,0); Address 0x7f2a4c000fa4 is out of bounds; and is 5 bytes after the nearest allocation at 0x7f2a4c000000 of size 4000 bytes\n"+
			`  Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.`,
			err.Error())
	})
	t.Run("racecheck: one race between two lines", func(t *testing.T) {
		r := parseSanitizer(toolkit.Racecheck, read("sanitizer_racecheck.txt"))
		assert.Equal(t, 1, r.Errors)
		require.Len(t, r.Findings, 1)
		f := r.Findings[0]
		assert.Equal(t, "Error: Race reported between Write access at transpose+0x1b0 in kernel.cu:4", f.What)
		assert.Equal(t, "kernel.cu", f.File)
		assert.Equal(t, 4, f.Line, "the first line named: the write")
		assert.Equal(t, []string{"and Read access at transpose+0x2c0 in kernel.cu:6 [992 hazards]"}, f.Details)
		assert.False(t, f.HasThread)
	})
	t.Run("a clean run among the program's own lines", func(t *testing.T) {
		r := parseSanitizer(toolkit.Memcheck, "========= COMPUTE-SANITIZER\nsome output of the program\n========= ERROR SUMMARY: 0 errors\n")
		assert.True(t, r.Clean())
		assert.Empty(t, r.Findings)
		assert.NotContains(t, r.Text, "some output")
	})
}

func TestShortenPaths(t *testing.T) {
	for in, want := range map[string]string{
		"at k+0x10 in /tmp/x/kernel.cu:7":           "at k+0x10 in kernel.cu:7",
		`compilation of "/tmp/w/coalesce_host.cu".`: `compilation of "coalesce_host.cu".`,
		"kernel.cu(3): error: x":                    "kernel.cu(3): error: x",
		"/tmp/w/kernel.cuh stays":                   "/tmp/w/kernel.cuh stays",
	} {
		assert.Equal(t, want, shortenPaths(in), in)
	}
}
