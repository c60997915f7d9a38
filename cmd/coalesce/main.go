// Command coalesce is the course's command line: it predicts experiment
// specs with the sector model, measures them on a GPU, lays the two side by
// side, draws the course's plots and grades learners' notebooks.
//
// Usage:
//
//	coalesce model [FILE]          predict specs (JSON lines) with the model
//	coalesce table                 the seed's table, computed by the model
//	coalesce run [-ncu] [FILE]     measure specs on this machine's GPU
//	coalesce calibrate             fit the model's profile to this machine's GPU
//	coalesce compare [FILE]        model beside measurement, one row per spec
//	coalesce plot KIND OUT         draw a course plot to OUT (.png or .svg)
//	coalesce collect -hub URL      fetch a class's notebooks from a JupyterHub
//	coalesce grade SUBMISSIONS...  grade learners' saved notebooks
//
// coalesce COMMAND -h prints the command's usage and flags. FILE defaults to
// standard input. Exit status: 0 on success, 1 when a
// command fails or any input line is bad, 2 on a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks an error in how the command was called: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errHelped is returned when a command printed its usage because it was
// asked to (-h): the command succeeded.
var errHelped = errors.New("usage shown")

// parseFlags parses a command's flags. Asked for help (-h, -help), it writes
// doc and the flags with their defaults to stdout and returns errHelped;
// a flag error is a usage error naming the command.
func parseFlags(fs *flag.FlagSet, doc string, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, doc)
		if hasFlags(fs) {
			fmt.Fprint(stdout, "\nflags:\n")
			fs.SetOutput(stdout)
			fs.PrintDefaults()
		}
		return errHelped
	case err != nil:
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

func hasFlags(fs *flag.FlagSet) bool {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n > 0
}

// errReported is returned when the command already wrote what went wrong
// (bad lines answered in place) and only the exit status remains to be set.
var errReported = errors.New("some input was bad; see the output")

func exitCode(err error, stderr io.Writer) int {
	var ue *usageError
	switch {
	case err == nil, errors.Is(err, errHelped):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "coalesce: %v\n\n%s", err, usage())
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(stderr, "coalesce: %v\n", err)
		return 1
	}
}

// command is one subcommand of coalesce.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// commands holds every subcommand; each file of this package adds its own
// in an init function, so a new command touches no other file.
var commands = map[string]command{}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("no command given")
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		fmt.Fprint(stdout, usage())
		return nil
	}
	cmd, ok := commands[name]
	if !ok {
		return usagef("unknown command %q: want one of %s", name, strings.Join(commandNames(), ", "))
	}
	if err := cmd.run(ctx, args[1:], stdin, stdout, stderr); !errors.Is(err, errHelped) {
		return err
	}
	return nil
}

func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage() string {
	var b strings.Builder
	b.WriteString("usage: coalesce COMMAND [ARGS]\n\ncommands:\n")
	for _, n := range commandNames() {
		fmt.Fprintf(&b, "  %-9s %s\n", n, commands[n].summary)
	}
	return b.String()
}

// openInput returns the named file, or stdin when no name or "-" is given.
func openInput(args []string, stdin io.Reader) (io.Reader, func(), error) {
	switch {
	case len(args) == 0 || slices.Equal(args, []string{"-"}):
		return stdin, func() {}, nil
	case len(args) > 1:
		return nil, nil, usagef("want at most one FILE, got %d: %s", len(args), strings.Join(args, " "))
	}
	f, err := os.Open(args[0])
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}
