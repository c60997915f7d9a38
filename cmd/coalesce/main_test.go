package main

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
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
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script", UpdateScripts: *update})
}
