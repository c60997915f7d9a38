package toolkit

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coalescing-course/coalesce/internal/faketool"
)

func TestInvocationRun(t *testing.T) {
	faketool.NeedSh(t)
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	tests := []struct {
		name       string
		inv        Invocation
		wantOut    string
		wantErr    any    // nil, **ToolError or **StartError
		wantCode   int    // for a ToolError
		wantInErr  string // substring of the error
		wantReason error  // errors.Is target
	}{
		{
			name:    "success returns stdout",
			inv:     Invocation{Tool: "echo", Path: faketool.Script(t, dir, "ok", `echo "out $1"; echo noise >&2`), Args: []string{"a b"}},
			wantOut: "out a b\n",
		},
		{
			name:      "exit status and stderr kept",
			inv:       Invocation{Tool: "nvcc", Path: faketool.Script(t, dir, "fail", `echo partial; echo "harness.cu(3): error: expected a ;" >&2; exit 2`)},
			wantOut:   "partial\n",
			wantErr:   new(*ToolError),
			wantCode:  2,
			wantInErr: "nvcc exited with status 2: harness.cu(3): error: expected a ;",
		},
		{
			name:      "cannot start",
			inv:       Invocation{Tool: "ncu", Path: notExec},
			wantErr:   new(*StartError),
			wantInErr: "could not start ncu",
		},
		{
			name:      "no such file",
			inv:       Invocation{Tool: "ncu", Path: filepath.Join(dir, "absent")},
			wantErr:   new(*StartError),
			wantInErr: "no such file",
		},
		{
			name:       "timeout interrupts",
			inv:        Invocation{Tool: "harness", Path: faketool.Script(t, dir, "slow", "sleep 10\n"), Timeout: 100 * time.Millisecond, WaitDelay: 100 * time.Millisecond},
			wantErr:    new(*ToolError),
			wantCode:   -1,
			wantInErr:  "harness did not finish within 100ms",
			wantReason: context.DeadlineExceeded,
		},
		{
			name:    "stdin and extra environment",
			inv:     Invocation{Tool: "cat", Path: faketool.Script(t, dir, "cat", `cat; echo "$EXTRA"`), Stdin: strings.NewReader("in\n"), Env: []string{"EXTRA=env"}},
			wantOut: "in\nenv\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.inv.Run(context.Background())
			assert.Equal(t, tt.wantOut, string(out))
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.ErrorAs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), tt.wantInErr)
			if te, ok := tt.wantErr.(**ToolError); ok {
				assert.Equal(t, tt.wantCode, (*te).ExitCode)
				if tt.wantReason == nil {
					var ee *exec.ExitError
					assert.ErrorAs(t, err, &ee, "a ToolError from an exit unwraps to *exec.ExitError")
				}
			}
			if tt.wantReason != nil {
				assert.ErrorIs(t, err, tt.wantReason)
			}
		})
	}
}

func TestInvocationStderrTee(t *testing.T) {
	faketool.NeedSh(t)
	var b strings.Builder
	inv := Invocation{Tool: "nvcc", Path: faketool.Script(t, t.TempDir(), "warn", `echo "nvcc warning : careful" >&2`), Stderr: &b}
	_, err := inv.Run(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "nvcc warning : careful\n", b.String())
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := &tailBuffer{max: 8}
	tb.Write([]byte("0123456789"))
	tb.Write([]byte("ab"))
	assert.Equal(t, "...456789ab", tb.String())
	small := &tailBuffer{max: 8}
	small.Write([]byte("abc"))
	assert.Equal(t, "abc", small.String())
}

func TestInvocationString(t *testing.T) {
	inv := Invocation{Path: "/usr/bin/ncu", Args: []string{"--metrics", "a,b", "it's here", ""}}
	assert.Equal(t, `/usr/bin/ncu --metrics a,b 'it'\''s here' ''`, inv.String())
}

func TestMissingTools(t *testing.T) {
	absent := func() (string, error) { return lookTool("nvcc", "NO_SUCH_VARIABLE_SET") }
	absentNcu := func() (string, error) { return lookTool("ncu", "NO_SUCH_VARIABLE_SET") }
	t.Setenv("PATH", t.TempDir())
	tests := []struct {
		name     string
		find     func() error
		sentinel error
		want     string
	}{
		{"nvcc", func() error { _, err := findNvcc(absent); return err }, ErrNoNvcc,
			"cuda: nvcc not found on PATH: install the CUDA toolkit, or use the recorded reference (coalesce compare falls back on it)"},
		{"ncu", func() error { _, err := findNcu(absentNcu); return err }, ErrNoNcu,
			"cuda: ncu not found on PATH: install Nsight Compute (it comes with the CUDA toolkit), or use the recorded reference (coalesce compare falls back on it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.find()
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.sentinel)
			var me *MissingError
			require.ErrorAs(t, err, &me)
			assert.Equal(t, tt.want, err.Error())
		})
	}
	found := func() (string, error) { return "/opt/cuda/bin/nvcc", nil }
	n, err := findNvcc(found)
	require.NoError(t, err)
	assert.Equal(t, "/opt/cuda/bin/nvcc", n.Path)
}

func TestLookTool(t *testing.T) {
	faketool.NeedSh(t)
	dir := t.TempDir()
	nvcc := faketool.Script(t, dir, "nvcc", "")
	t.Setenv("PATH", dir)
	t.Setenv("TEST_NVCC", "")
	p, err := lookTool("nvcc", "TEST_NVCC")
	require.NoError(t, err)
	assert.Equal(t, nvcc, p)

	other := faketool.Script(t, t.TempDir(), "my-nvcc", "")
	t.Setenv("TEST_NVCC", other)
	p, err = lookTool("nvcc", "TEST_NVCC")
	require.NoError(t, err)
	assert.Equal(t, other, p, "the variable wins over the PATH")

	t.Setenv("TEST_NVCC", filepath.Join(dir, "absent"))
	_, err = findNvcc(func() (string, error) { return lookTool("nvcc", "TEST_NVCC") })
	assert.True(t, errors.Is(err, ErrNoNvcc))
	assert.Contains(t, err.Error(), "nvcc not found at "+filepath.Join(dir, "absent")+" (set by TEST_NVCC)")
}

func TestCommandLines(t *testing.T) {
	nv := Nvcc{Path: "/cuda/bin/nvcc"}
	b := nv.BuildCmd("/tmp/w", "harness.cu", "/tmp/w/harness", archNative, time.Minute)
	assert.Equal(t, "/cuda/bin/nvcc", b.Path)
	assert.Equal(t, "/tmp/w", b.Dir)
	assert.Equal(t, []string{"-O3", "-lineinfo", "-std=c++17", "-arch=native", "-o", "/tmp/w/harness", "harness.cu"}, b.Args)
	ada, err := ArchFor("8.9")
	require.NoError(t, err)
	fb := nv.BuildCmd("/tmp/w", "harness.cu", "/tmp/w/harness", ada, time.Minute)
	assert.Equal(t, []string{"-O3", "-lineinfo", "-std=c++17", "-gencode", "arch=compute_89,code=[sm_89,compute_89]", "-o", "/tmp/w/harness", "harness.cu"}, fb.Args)
	assert.Equal(t, []string{"--query-gpu=compute_cap", "--format=csv,noheader"}, Smi{Path: "/usr/bin/nvidia-smi"}.ComputeCapCmd().Args)
	assert.Equal(t, []string{"--version"}, nv.VersionCmd().Args)

	ncu := Ncu{Path: "/cuda/bin/ncu"}
	p := ncu.ProfileCmd("/cache/harness-1", []string{"--input", "in", "--output", "out", "--profile"}, time.Hour)
	assert.Equal(t, "/cuda/bin/ncu", p.Path)
	assert.Equal(t, time.Hour, p.Timeout)
	assert.Equal(t, []string{
		"--clock-control", "none",
		"--metrics", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum," +
			"l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum," +
			"dram__bytes_read.sum,dram__bytes_write.sum," +
			// The shared-memory counters (lesson 9): requests, wavefronts,
			// bank conflicts, loads then stores.
			"smsp__inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum," +
			"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_st.sum," +
			"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum," +
			// The L2's sectors read for and written by the L1 (lesson 9).
			"lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum",
		"--csv", "--page", "raw", "--print-units", "base",
		"--kernel-name", "regex:^k_",
		"/cache/harness-1", "--input", "in", "--output", "out", "--profile",
	}, p.Args)
}

func TestArchFor(t *testing.T) {
	tests := []struct {
		cc   string
		want []string
		err  bool
	}{
		{"9.0", []string{"-gencode", "arch=compute_90,code=[sm_90,compute_90]"}, false},
		{" 7.5 ", []string{"-gencode", "arch=compute_75,code=[sm_75,compute_75]"}, false},
		{"12.0", []string{"-gencode", "arch=compute_120,code=[sm_120,compute_120]"}, false},
		{"N/A", nil, true},
		{"9.0a", nil, true},
		{"9", nil, true},
		{"-9.0", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.cc, func(t *testing.T) {
			got, err := ArchFor(tt.cc)
			if tt.err {
				assert.ErrorContains(t, err, "want major.minor")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
