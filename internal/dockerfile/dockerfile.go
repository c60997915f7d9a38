// Package dockerfile reads a Dockerfile into its instructions and stages,
// enough for the tests of deploy to hold the course's image to what it
// must do without a Docker engine: the base image, the user, the
// environment, the install step.
//
// Parse reads a Dockerfile into its instructions, one per logical line:
//
//	FROM nvidia/cuda:13.0.2-devel-ubuntu24.04
//	RUN apt-get update \
//	 && apt-get install -y tini      # one Instruction: RUN, line 2
//	USER 1000
//
// gives Instructions FROM (line 1), RUN (line 2, continuation joined) and
// USER (line 4). Comments and blank lines go; parser directives
// (# syntax=..., # escape=...) are kept in Dockerfile.Directives. It is the
// subset of the Dockerfile syntax this repository uses: heredocs (RUN <<EOF)
// are refused with ErrHeredoc rather than misread. Errors are *ParseError
// values with the line at fault, wrapping one of the Err variables.
package dockerfile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Errors a caller may branch on with errors.Is.
var (
	// ErrUnknownInstruction is a line that starts with a word that is not
	// a Dockerfile instruction.
	ErrUnknownInstruction = errors.New("unknown instruction")
	// ErrNoArguments is an instruction with nothing after it.
	ErrNoArguments = errors.New("instruction without arguments")
	// ErrContinuation is a line continuation at the end of the file.
	ErrContinuation = errors.New("line continuation at end of file")
	// ErrHeredoc is a heredoc (RUN <<EOF), which this parser does not read.
	ErrHeredoc = errors.New("heredocs are not supported")
	// ErrEscape is an escape directive other than \ or `.
	ErrEscape = errors.New("bad escape directive")
)

// ParseError is a Dockerfile that could not be read, with where and why.
type ParseError struct {
	// Line is the 1-based line at fault.
	Line int
	// Msg says what was found.
	Msg string
	// Err is one of the Err variables.
	Err error
}

func (e *ParseError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("deploy: Dockerfile line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("deploy: Dockerfile line %d: %v: %s", e.Line, e.Err, e.Msg)
}

// Unwrap returns the sentinel the ParseError wraps.
func (e *ParseError) Unwrap() error { return e.Err }

// instructions are the Dockerfile instructions (the reference's list).
var instructions = map[string]bool{
	"ADD": true, "ARG": true, "CMD": true, "COPY": true, "ENTRYPOINT": true,
	"ENV": true, "EXPOSE": true, "FROM": true, "HEALTHCHECK": true,
	"LABEL": true, "MAINTAINER": true, "ONBUILD": true, "RUN": true,
	"SHELL": true, "STOPSIGNAL": true, "USER": true, "VOLUME": true,
	"WORKDIR": true,
}

// Instruction is one instruction of a Dockerfile.
type Instruction struct {
	// Line is the 1-based line the instruction starts on.
	Line int
	// Cmd is the instruction, upper case: FROM, RUN, COPY, ...
	Cmd string
	// Flags are the leading --name=value options (COPY --chown=1000,
	// HEALTHCHECK --interval=30s), in order.
	Flags []string
	// Args is the rest, continuation lines joined with single spaces and
	// comment lines inside the continuation dropped.
	Args string
}

// Exec returns the arguments of an exec-form instruction (CMD ["a", "b"]):
// the JSON array and true; or nil and false for the shell form.
func (in Instruction) Exec() ([]string, bool) {
	if !strings.HasPrefix(in.Args, "[") {
		return nil, false
	}
	var args []string
	if err := json.Unmarshal([]byte(in.Args), &args); err != nil {
		return nil, false
	}
	return args, true
}

// Flag returns the value of the flag --name (COPY --chown=1000:100 gives
// "1000:100" for "chown") and whether it is there.
func (in Instruction) Flag(name string) (string, bool) {
	for _, f := range in.Flags {
		k, v, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

func (in Instruction) String() string {
	parts := append([]string{in.Cmd}, in.Flags...)
	return strings.Join(append(parts, in.Args), " ")
}

// Dockerfile is a parsed Dockerfile.
type Dockerfile struct {
	// Directives are the parser directives at the top (# syntax=..., #
	// escape=...), keys in lower case.
	Directives map[string]string
	// Instructions in file order.
	Instructions []Instruction
}

// All returns the instructions cmd (upper case), in order.
func (d *Dockerfile) All(cmd string) []Instruction {
	var out []Instruction
	for _, in := range d.Instructions {
		if in.Cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// Last returns the last instruction cmd and true, or false if there is none.
func (d *Dockerfile) Last(cmd string) (Instruction, bool) {
	all := d.All(cmd)
	if len(all) == 0 {
		return Instruction{}, false
	}
	return all[len(all)-1], true
}

var (
	directiveRE = regexp.MustCompile(`^#\s*([a-zA-Z][a-zA-Z0-9_-]*)\s*=\s*(.*?)\s*$`)
	heredocRE   = regexp.MustCompile(`<<-?["']?[A-Za-z_][A-Za-z0-9_]*["']?`)
)

// Parse reads a Dockerfile. See the package documentation for what it reads.
func Parse(r io.Reader) (*Dockerfile, error) {
	d := &Dockerfile{Directives: map[string]string{}}
	escape := byte('\\')
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)

	directives := true // parser directives are only read before anything else
	lineNo := 0
	var cur []string // the pieces of the instruction being read
	start := 0       // its first line
	flush := func() error {
		if cur == nil {
			return nil
		}
		in, err := parseInstruction(start, strings.Join(cur, " "))
		cur = nil
		if err != nil {
			return err
		}
		d.Instructions = append(d.Instructions, in)
		return nil
	}
	for sc.Scan() {
		lineNo++
		raw := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(raw)
		if directives {
			if m := directiveRE.FindStringSubmatch(trimmed); m != nil {
				key := strings.ToLower(m[1])
				if _, dup := d.Directives[key]; !dup {
					d.Directives[key] = m[2]
					if key == "escape" {
						if m[2] != `\` && m[2] != "`" {
							return nil, &ParseError{Line: lineNo, Err: ErrEscape, Msg: fmt.Sprintf("%q (want \\ or `)", m[2])}
						}
						escape = m[2][0]
					}
					continue
				}
			}
			directives = false
		}
		// Comment lines and blank lines: dropped, also inside a continuation.
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cur == nil {
			start = lineNo
		}
		piece := strings.TrimSpace(raw)
		continued := len(piece) > 0 && piece[len(piece)-1] == escape
		if continued {
			piece = strings.TrimSpace(piece[:len(piece)-1])
		}
		if piece != "" {
			cur = append(cur, piece)
		} else if cur == nil {
			cur = []string{}
		}
		if !continued {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("deploy: reading Dockerfile: %w", err)
	}
	if cur != nil {
		return nil, &ParseError{Line: start, Err: ErrContinuation}
	}
	return d, nil
}

func parseInstruction(line int, text string) (Instruction, error) {
	word, rest, _ := strings.Cut(text, " ")
	cmd := strings.ToUpper(word)
	if !instructions[cmd] {
		return Instruction{}, &ParseError{Line: line, Err: ErrUnknownInstruction, Msg: fmt.Sprintf("%q", word)}
	}
	in := Instruction{Line: line, Cmd: cmd}
	rest = strings.TrimSpace(rest)
	// Leading --flags. (ONBUILD's flags belong to the instruction it holds.)
	for cmd != "ONBUILD" && strings.HasPrefix(rest, "--") {
		flag, after, _ := strings.Cut(rest, " ")
		in.Flags = append(in.Flags, flag)
		rest = strings.TrimSpace(after)
	}
	if rest == "" {
		return Instruction{}, &ParseError{Line: line, Err: ErrNoArguments, Msg: cmd}
	}
	if (cmd == "RUN" || cmd == "COPY" || cmd == "ADD") && heredocRE.MatchString(rest) && !strings.HasPrefix(rest, "[") {
		return Instruction{}, &ParseError{Line: line, Err: ErrHeredoc, Msg: cmd + " " + rest}
	}
	in.Args = rest
	return in, nil
}

// Stage is the instructions of one build stage, from its FROM on.
type Stage struct {
	// From is the stage's FROM instruction.
	From Instruction
	// Image is the base image reference (FROM's first argument), Name the
	// stage name after AS ("" when none).
	Image, Name string
	// Instructions are those after FROM up to the next FROM.
	Instructions []Instruction
}

// Stages splits the Dockerfile at its FROM instructions; instructions before
// the first FROM (ARGs) belong to no stage.
func (d *Dockerfile) Stages() []Stage {
	var out []Stage
	for _, in := range d.Instructions {
		if in.Cmd == "FROM" {
			f := strings.Fields(in.Args)
			s := Stage{From: in, Image: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.Name = f[2]
			}
			out = append(out, s)
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Instructions = append(out[len(out)-1].Instructions, in)
		}
	}
	return out
}

// ImageRef is a parsed image reference: [registry/]repository[:tag][@digest].
type ImageRef struct {
	Repository, Tag, Digest string
}

// ParseImageRef splits an image reference such as
// nvidia/cuda:13.0.2-devel-ubuntu24.04 or name@sha256:....
func ParseImageRef(s string) ImageRef {
	var r ImageRef
	s, r.Digest, _ = strings.Cut(s, "@")
	// A colon after the last slash separates the tag (a colon before it is a
	// registry port).
	slash := strings.LastIndex(s, "/")
	if i := strings.LastIndex(s, ":"); i > slash {
		s, r.Tag = s[:i], s[i+1:]
	}
	r.Repository = s
	return r
}

// Env returns the environment the ENV instructions of stage s have set up to
// (not including) instruction index upto of s.Instructions; ARG defaults are
// used to expand $NAME and ${NAME} in values, as Docker does.
func (s Stage) Env(upto int) map[string]string {
	env := map[string]string{}
	args := map[string]string{}
	lookup := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return args[k]
	}
	for i, in := range s.Instructions {
		if i >= upto {
			break
		}
		switch in.Cmd {
		case "ENV":
			for _, kv := range Words(in.Args) {
				k, v, ok := strings.Cut(kv, "=")
				if ok {
					env[k] = Expand(v, lookup)
				}
			}
		case "ARG":
			k, v, _ := strings.Cut(in.Args, "=")
			args[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return env
}

var varRE = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// Expand replaces $NAME and ${NAME} in s with lookup(NAME), as the
// Dockerfile expands ARG and ENV values.
func Expand(s string, lookup func(string) string) string {
	return varRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := varRE.FindStringSubmatch(m)
		name := sub[1] + sub[2]
		return lookup(name)
	})
}

// Words splits s as a shell would split it into words, for the simple cases
// of ENV lines and RUN commands: blanks separate words, single and double
// quotes group (and are removed), a backslash escapes the next character.
// Operators such as && are words of their own only when surrounded by blanks.
func Words(s string) []string {
	var out []string
	var b strings.Builder
	in := false // inside a word
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			b.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, in = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				b.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}
