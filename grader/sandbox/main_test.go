package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// moduleRoot is the course's module, seen from this package's directory:
// the tests build against the source tree, where the stand-in lives.
const moduleRoot = "../.."

// standIn is the test's exercises package (testdata/exercises): one
// exercise, a copy of 4096 floats, passed when correct with 4 load sectors
// per request.
const standIn = CourseModule + "/grader/sandbox/testdata/exercises"

// testConfig is the limits the hostile tests run under: small, so that
// each bomb goes off in a second or two.
func testConfig() Config {
	return Config{Course: os.DirFS(moduleRoot), GradePackage: standIn, RunTimeout: 20 * time.Second, CPU: 2 * time.Second,
		Memory: 1 << 30, MaxOutput: 4 << 10, BuildMemory: 2 << 30}
}

// batches are the tests' batches, one per configuration, shared by every
// test that runs under it and closed after all: a batch's first build
// of the course's packages, and each kernel's child, are made once (and
// kept, in the sandbox's directory, for the next run of the tests).
var batches = struct {
	sync.Mutex
	m map[string]*Batch
}{m: map[string]*Batch{}}

// testBatch returns the shared batch of c.
func testBatch(t *testing.T, c Config) *Batch {
	t.Helper()
	key := fmt.Sprintf("%s %s %v %v %v %d %d %d %d", c.GradePackage, c.CacheDir, c.BuildTimeout, c.RunTimeout, c.CPU, c.Memory, c.MaxOutput, c.BuildMemory, c.BuildFileSize)
	batches.Lock()
	defer batches.Unlock()
	if b := batches.m[key]; b != nil {
		return b
	}
	b, err := NewBatch(context.Background(), c)
	if err != nil {
		t.Fatalf("NewBatch: %v", err)
	}
	batches.m[key] = b
	return b
}

func TestMain(m *testing.M) {
	if dir := os.Getenv(graderEnv); dir != "" {
		graderMain(dir)
		return
	}
	code := m.Run()
	for _, b := range batches.m {
		b.Close()
	}
	os.Exit(code)
}

// graderEnv makes the test binary a grader that opens a batch with the
// sandbox's directory the variable names, on a cold cache, and is killed
// while it builds (TestKilledGraderLeavesNoProcess).
const graderEnv = "SANDBOX_TEST_GRADER"

func graderMain(dir string) {
	c := testConfig()
	c.CacheDir = dir
	_ = os.WriteFile(filepath.Join(dir, "started"), nil, 0o600)
	_, err := NewBatch(context.Background(), c)
	fmt.Fprintln(os.Stderr, "the grader was not killed:", err)
	os.Exit(3)
}
