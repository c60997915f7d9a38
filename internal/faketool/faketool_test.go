package faketool

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

func TestScriptRuns(t *testing.T) {
	NeedSh(t)
	p := Script(t, t.TempDir(), "tool", `echo "args: $*"; exit 3`)
	out, err := exec.Command(p, "a", "b").Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("got error %v, want exit status 3", err)
	}
	if got := strings.TrimSpace(string(out)); got != "args: a b" {
		t.Errorf("got %q, want %q", got, "args: a b")
	}
}
