package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/coalescing-course/coalesce/grader/collect"
	"github.com/coalescing-course/coalesce/internal/atomicfile"
)

func init() {
	commands["collect"] = command{
		summary: "fetch a class's notebooks from a JupyterHub: -hub URL [-token-file F] [-out DIR]",
		run:     runCollect,
	}
}

const collectUsage = `usage: coalesce collect -hub URL [-token-file FILE] [-out DIR] [-roster FILE]
                        [-users a,b] [-admins] [-no-start] [-folder PATH]
                        [-max-size BYTES] [-max-files N] [-timeout D] [-start-timeout D]
                        [-parallel N]

Fetches every learner's notebooks from a JupyterHub into DIR/LEARNER/, the
layout coalesce grade reads, through the hub's REST API with a service token
(-token-file, else $JUPYTERHUB_API_TOKEN; it needs the scopes list:users,
read:users:name, read:servers, servers and access:servers: docs/running.md).
A learner whose server is stopped has it started, read and stopped again
(-no-start: not collected). The notebooks are ~/course/notebooks: notebooks/
from the server's root (~/course, docs/running.md's notebookDir), else
course/notebooks (a server rooted at the home), or -folder; subfolders
included, each written whole with the server's modification time. A second run fetches only what changed, and
removes a notebook it collected that the server no longer has.

Writes the roster, every hub user collected (admins only with -admins),
one a line, to -roster (default: roster.txt beside DIR): grade it with
  coalesce grade -roster roster.txt -out grades/ DIR/
so that a learner who saved nothing still has a row.

Exit status 1 when some learner could not be collected (each is named,
with the request and the HTTP status); what was collected stays.
`

func runCollect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("collect", flag.ContinueOnError)
	hub := fs.String("hub", "", "the hub's URL, e.g. https://hub.example.edu/")
	tokenFile := fs.String("token-file", "", "file holding the service token (default: $JUPYTERHUB_API_TOKEN)")
	out := fs.String("out", "submissions", "folder to collect into: DIR/LEARNER/NAME.ipynb")
	roster := fs.String("roster", "", "where to write the roster (default: roster.txt beside -out)")
	users := fs.String("users", "", "collect only these hub users (comma-separated)")
	admins := fs.Bool("admins", false, "also collect the hub's admin users")
	noStart := fs.Bool("no-start", false, "do not start stopped servers (their learners are not collected)")
	folder := fs.String("folder", "", "the folder to collect, from each server's root (default: notebooks, else course/notebooks)")
	maxSize := fs.Int64("max-size", collect.DefaultMaxBytes, "largest notebook fetched, in bytes")
	maxFiles := fs.Int("max-files", collect.DefaultMaxFiles, "most notebooks fetched per learner")
	timeout := fs.Duration("timeout", collect.DefaultRequestTimeout, "deadline of one request")
	startTimeout := fs.Duration("start-timeout", collect.DefaultStartTimeout, "deadline of a server's start")
	parallel := fs.Int("parallel", collect.DefaultParallel, "learners collected at once")
	if err := parseFlags(fs, collectUsage, args, stdout); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("collect: unexpected arguments %s: the flags say it all", strings.Join(fs.Args(), " "))
	case *hub == "":
		return usagef("collect: -hub URL is required, e.g. -hub https://hub.example.edu/")
	case *maxSize <= 0:
		return usagef("collect: -max-size %d: want a positive number of bytes", *maxSize)
	case *maxFiles <= 0:
		return usagef("collect: -max-files %d: want a positive number", *maxFiles)
	case *timeout <= 0 || *startTimeout <= 0:
		return usagef("collect: -timeout and -start-timeout: want positive durations, e.g. 2m")
	case *parallel <= 0:
		return usagef("collect: -parallel %d: want a positive number", *parallel)
	}
	token := os.Getenv("JUPYTERHUB_API_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			return fmt.Errorf("collect: -token-file: %w", err)
		}
		token = string(b)
	}
	o := collect.Options{
		Hub: *hub, Token: token, Out: *out, Folder: *folder, Admins: *admins, NoStart: *noStart,
		MaxBytes: *maxSize, MaxFiles: *maxFiles, RequestTimeout: *timeout, StartTimeout: *startTimeout,
		Parallel: *parallel, Log: stderr,
	}
	if *users != "" {
		for _, u := range strings.Split(*users, ",") {
			if u = strings.TrimSpace(u); u != "" {
				o.Users = append(o.Users, u)
			}
		}
	}
	res, err := collect.Collect(ctx, o)
	if err != nil {
		return err
	}
	if *roster == "" {
		*roster = filepath.Join(filepath.Dir(filepath.Clean(*out)), "roster.txt")
	}
	if err := atomicfile.WriteBytes(*roster, 0o644, []byte(res.Roster(*hub, time.Now()))); err != nil {
		return fmt.Errorf("collect: the roster: %w", err)
	}
	files, fetched := 0, 0
	for _, l := range res.Learners {
		files += len(l.Files)
		fetched += len(l.Fetched)
	}
	failed := res.Failed()
	fmt.Fprintf(stdout, "collected %s of %s into %s (%d fetched now); roster: %s\n",
		count(files, "notebook"), count(len(res.Learners)-len(failed), "learner"), filepath.ToSlash(*out), fetched, filepath.ToSlash(*roster))
	if len(failed) > 0 {
		for _, l := range failed {
			fmt.Fprintf(stderr, "coalesce %v\n", l.Err)
		}
		fmt.Fprintf(stderr, "coalesce collect: %s of %d not (all) collected; run again to resume\n", count(len(failed), "learner"), len(res.Learners))
		return errReported
	}
	return nil
}
