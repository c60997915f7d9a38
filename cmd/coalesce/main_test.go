package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/coalescing-course/coalesce/grader/sandbox"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"coalesce": func() {
			os.Exit(exitCode(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr), os.Stderr))
		},
	})
}

var update = flag.Bool("update", false, "rewrite the expected files in testdata/script from the command's output")

// TestScripts runs the command as a user would, from testdata/script/*.txtar.
// After a deliberate change to the output, go test -run TestScripts -update
// rewrites the files the scripts compare with; review the diff.
//
// The scripts' HOME is none; the sandbox's caches (grade -kernels) are
// the test's user's, so that the course's packages compiled for the
// sandbox and the children built are kept from one run to the next.
func TestScripts(t *testing.T) {
	cache := sandboxDir()
	testscript.Run(t, testscript.Params{Dir: "testdata/script", UpdateScripts: *update, Setup: func(e *testscript.Env) error {
		e.Setenv(sandbox.CacheDirEnv, cache)
		return nil
	}})
}

// sandboxDir is the sandbox's directory of the test's user.
func sandboxDir() string {
	if d := os.Getenv(sandbox.CacheDirEnv); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "coalesce", "sandbox")
	}
	return filepath.Join(os.TempDir(), "coalesce-sandbox-test")
}
