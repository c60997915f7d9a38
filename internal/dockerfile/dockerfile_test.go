package dockerfile

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []Instruction
		wantD map[string]string
	}{
		{
			name: "one instruction a line, comments and blanks dropped",
			in:   "# a comment\n\nFROM ubuntu:24.04\n  # indented comment\nuser 1000\n",
			want: []Instruction{
				{Line: 3, Cmd: "FROM", Args: "ubuntu:24.04"},
				{Line: 5, Cmd: "USER", Args: "1000"},
			},
		},
		{
			name: "continuation joined, comment and blank lines inside it dropped",
			in:   "RUN apt-get update \\\n # why\n\n && apt-get install -y tini \\\n    curl\nEXPOSE 8888",
			want: []Instruction{
				{Line: 1, Cmd: "RUN", Args: "apt-get update && apt-get install -y tini curl"},
				{Line: 6, Cmd: "EXPOSE", Args: "8888"},
			},
		},
		{
			name: "flags",
			in:   "COPY --chown=1000:100 --link . /opt/course\nHEALTHCHECK --interval=30s CMD curl -f http://x/ || exit 1",
			want: []Instruction{
				{Line: 1, Cmd: "COPY", Flags: []string{"--chown=1000:100", "--link"}, Args: ". /opt/course"},
				{Line: 2, Cmd: "HEALTHCHECK", Flags: []string{"--interval=30s"}, Args: "CMD curl -f http://x/ || exit 1"},
			},
		},
		{
			name:  "directives, then the escape character they set",
			in:    "# syntax=docker/dockerfile:1\n# escape=`\nRUN a `\n  b\n# syntax=ignored\n",
			want:  []Instruction{{Line: 3, Cmd: "RUN", Args: "a b"}},
			wantD: map[string]string{"syntax": "docker/dockerfile:1", "escape": "`"},
		},
		{
			name:  "directives only at the top",
			in:    "FROM x:1\n# syntax=docker/dockerfile:1\n",
			want:  []Instruction{{Line: 1, Cmd: "FROM", Args: "x:1"}},
			wantD: map[string]string{},
		},
		{
			name: "CRLF line ends",
			in:   "FROM x:1\r\nRUN a \\\r\n b\r\n",
			want: []Instruction{{Line: 1, Cmd: "FROM", Args: "x:1"}, {Line: 2, Cmd: "RUN", Args: "a b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(strings.NewReader(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Instructions)
			if tt.wantD != nil {
				assert.Equal(t, tt.wantD, d.Directives)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantErr  error
		wantLine int
	}{
		{"unknown instruction", "FROM x:1\nFORM y\n", ErrUnknownInstruction, 2},
		{"continuation at end of file", "FROM x:1\nRUN a \\\n", ErrContinuation, 2},
		{"heredoc", "FROM x:1\nRUN <<EOF\necho hi\nEOF\n", ErrHeredoc, 2},
		{"no arguments", "FROM x:1\nUSER\n", ErrNoArguments, 2},
		{"bad escape directive", "# escape=x\nFROM x:1\n", ErrEscape, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in))
			require.Error(t, err)
			assert.True(t, errors.Is(err, tt.wantErr), "got %v, want %v", err, tt.wantErr)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "got %T, want *ParseError", err)
			assert.Equal(t, tt.wantLine, pe.Line)
			assert.Contains(t, err.Error(), fmt.Sprintf("line %d", tt.wantLine))
		})
	}
}

func TestInstructionExecAndFlag(t *testing.T) {
	tests := []struct {
		name     string
		in       Instruction
		wantExec []string
		wantOK   bool
	}{
		{"exec form", Instruction{Cmd: "CMD", Args: `["jupyter", "lab", "--ip=0.0.0.0"]`}, []string{"jupyter", "lab", "--ip=0.0.0.0"}, true},
		{"shell form", Instruction{Cmd: "CMD", Args: `jupyter lab`}, nil, false},
		{"broken JSON is the shell form", Instruction{Cmd: "CMD", Args: `["jupyter", lab]`}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.in.Exec()
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantExec, got)
		})
	}
	in := Instruction{Cmd: "COPY", Flags: []string{"--link", "--chown=1000:100"}}
	v, ok := in.Flag("chown")
	assert.True(t, ok)
	assert.Equal(t, "1000:100", v)
	_, ok = in.Flag("chmod")
	assert.False(t, ok)
}

func TestParseImageRef(t *testing.T) {
	tests := []struct {
		in   string
		want ImageRef
	}{
		{"nvidia/cuda:13.0.2-devel-ubuntu24.04", ImageRef{Repository: "nvidia/cuda", Tag: "13.0.2-devel-ubuntu24.04"}},
		{"ubuntu", ImageRef{Repository: "ubuntu"}},
		{"registry:5000/team/img", ImageRef{Repository: "registry:5000/team/img"}},
		{"registry:5000/img:1.2", ImageRef{Repository: "registry:5000/img", Tag: "1.2"}},
		{"img:1@sha256:abc", ImageRef{Repository: "img", Tag: "1", Digest: "sha256:abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, ParseImageRef(tt.in))
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`A=1 B="two words" C='x y'`, []string{"A=1", "B=two words", "C=x y"}},
		{`KERNEL_PREFIX=/usr/local scripts/install.sh && echo ok`, []string{"KERNEL_PREFIX=/usr/local", "scripts/install.sh", "&&", "echo", "ok"}},
		{`a\ b "c\"d"`, []string{"a b", `c"d`}},
		{"  ", nil},
		{`""`, []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Words(tt.in))
		})
	}
}

func TestStagesAndEnv(t *testing.T) {
	d, err := Parse(strings.NewReader(`ARG BASE=x
FROM golang:1.26 AS build
RUN go build
FROM ubuntu:24.04
ARG PREFIX=/usr/local
ENV A=1 KERNEL_PREFIX=${PREFIX} PATH=/opt/bin:$PATH
ENV A=2
RUN install.sh
`))
	require.NoError(t, err)
	stages := d.Stages()
	require.Len(t, stages, 2)
	assert.Equal(t, "golang:1.26", stages[0].Image)
	assert.Equal(t, "build", stages[0].Name)
	assert.Equal(t, "ubuntu:24.04", stages[1].Image)
	assert.Equal(t, "", stages[1].Name)
	env := stages[1].Env(len(stages[1].Instructions))
	assert.Equal(t, map[string]string{"A": "2", "KERNEL_PREFIX": "/usr/local", "PATH": "/opt/bin:"}, env)
	assert.Equal(t, map[string]string{}, stages[1].Env(1), "nothing set before the first ENV")
}

func FuzzParse(f *testing.F) {
	f.Add("FROM x:1\nRUN a \\\n b\n")
	f.Add("# escape=`\nRUN a `\n b")
	f.Add("COPY --chown=1 . /x\nCMD [\"a\"]\n")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(strings.NewReader(s))
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && pe.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		last := 0
		for _, in := range d.Instructions {
			if !instructions[in.Cmd] {
				t.Fatalf("instruction %q is not one", in.Cmd)
			}
			if in.Line <= last {
				t.Fatalf("line %d after line %d", in.Line, last)
			}
			last = in.Line
			if in.Args == "" {
				t.Fatalf("line %d: %s without arguments", in.Line, in.Cmd)
			}
		}
		for _, st := range d.Stages() {
			_ = st.Env(len(st.Instructions))
		}
	})
}

func ExampleParse() {
	d, err := Parse(strings.NewReader(`# syntax=docker/dockerfile:1
FROM nvidia/cuda:13.0.2-devel-ubuntu24.04
RUN apt-get update \
 && apt-get install -y tini   # one logical line
USER 1000
CMD ["jupyter", "lab"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, in := range d.Instructions {
		fmt.Printf("%d %s: %s\n", in.Line, in.Cmd, in.Args)
	}
	cmd, _ := d.Last("CMD")
	args, _ := cmd.Exec()
	fmt.Println(len(args), args[1])
	// Output:
	// 2 FROM: nvidia/cuda:13.0.2-devel-ubuntu24.04
	// 3 RUN: apt-get update && apt-get install -y tini   # one logical line
	// 5 USER: 1000
	// 6 CMD: ["jupyter", "lab"]
	// 2 lab
}
