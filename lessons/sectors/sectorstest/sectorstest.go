// Package sectorstest gives tests the model's predictions of launches
// that take the model minutes to make, from a file that one version of
// the model's source wrote.
//
// The accuracy tests pair hundreds of measured launches with the model's
// predictions of them, some of 2^28 bytes or 2^25 random indices: on
// two cores that is most of a minute of every `go test ./...`. The model
// is a pure function of its source (lessons/sectors and the packages it
// imports, the profiles embedded among them) and the launch, so a
// prediction made by the same source is the prediction. A predictions
// file names the fingerprint of the source that made it: the SHA-256 of
// every file that builds those packages, with the Go version and the
// architecture (a compiler may fuse a multiply and an add on one and not
// on another). Predict uses the file only when its fingerprint is the
// current source's; otherwise it predicts everything again, which is
// slower and exactly as right, and says how to rewrite the file.
//
// A file is checked on every use too: the launches of up to CheckThreads
// threads, which the model predicts in milliseconds, are predicted again
// and must equal what the file holds, so that a hand-edited or
// mis-encoded file fails where the fingerprint cannot tell.
//
// The environment variable COALESCE_PREDICTIONS picks the mode: unset,
// the file when it is current; "update", predict everything and rewrite
// the file (`make predictions`); "off", predict everything and leave the
// file alone (the run that trusts nothing).
package sectorstest

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coalescing-course/coalesce/internal/atomicfile"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Env is the environment variable that picks the mode: "" (use a current
// file), "update" (rewrite it) or "off" (ignore it).
const Env = "COALESCE_PREDICTIONS"

// CheckThreads is the most threads a launch of the file may have to be
// predicted again on every use; a kernel with no launch this small has
// its smallest one predicted again.
const CheckThreads = 1 << 18

// modelPackage is the package whose source, with its imports of the
// module, makes the predictions.
const modelPackage = "github.com/coalescing-course/coalesce/lessons/sectors"

// header is a predictions file's first line.
type header struct {
	// Fingerprint is Fingerprint() of the source that wrote the file.
	Fingerprint string `json:"fingerprint"`
	// Note says what the file is, for a reader of the file.
	Note string `json:"note"`
}

// record is one prediction: the spec as the test asked for it, and the
// model's launch with the working the time model reads again (Retime),
// which Launch's JSON leaves out.
type record struct {
	Spec    spec.Spec       `json:"spec"`
	Launch  sectors.Launch  `json:"launch"`
	Traffic sectors.Traffic `json:"traffic"`
}

// Fingerprint returns the fingerprint of the model's source: the SHA-256
// of the Go version, the architecture, and the name and bytes of every
// file (Go, assembly, embedded) of lessons/sectors and of the module's
// packages it imports, as `go list -deps` finds them.
var Fingerprint = sync.OnceValues(func() (string, error) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			return "", fmt.Errorf("sectorstest: no go command to list the model's source: %w", err)
		}
	}
	const format = `{{if .Module}}{{if eq .Module.Path "github.com/coalescing-course/coalesce"}}{{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .SFiles}} {{.}}{{end}}{{range .EmbedFiles}} {{.}}{{end}}{{"\n"}}{{end}}{{end}}`
	cmd := exec.Command(goTool, "list", "-deps", "-f", format, modelPackage)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("sectorstest: go list -deps %s: %w: %s", modelPackage, err, strings.TrimSpace(stderr.String()))
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	root := ""
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dir, files := f[0], f[1:]
		if root == "" {
			// The first package listed sits deepest; the module root is
			// above every one: names are hashed relative to it, so that
			// two checkouts agree.
			root = moduleRoot(dir)
		}
		slices.Sort(files)
		for _, name := range files {
			path := filepath.Join(dir, name)
			b, err := os.ReadFile(path)
			if err != nil {
				return "", fmt.Errorf("sectorstest: the model's source: %w", err)
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return "", fmt.Errorf("sectorstest: %s: %w", path, err)
			}
			fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(b))
			h.Write(b)
		}
	}
	if root == "" {
		return "", fmt.Errorf("sectorstest: go list -deps %s listed no package of the module", modelPackage)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
})

// moduleRoot returns the directory above dir that holds go.mod.
func moduleRoot(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// used holds the files Load has been called with in this process: a
// file holds one call's specs, so that an update writes them all.
var used sync.Map

// Load returns sectors.ModelAll(specs...), from the predictions file at
// path where that file is current (see the package comment), checking
// the file's small launches against the model, and what it did, a line
// each, for the test's log. A prediction the file holds wrongly is
// replaced by the model's and reported in a *WrongError. One process may
// call it once for a path: the file holds exactly the specs of that
// call, which an update writes.
func Load(path string, specs []spec.Spec) (preds []sectors.Launch, log []string, err error) {
	if _, again := used.LoadOrStore(path, true); again {
		return nil, nil, fmt.Errorf("sectorstest: %s asked for twice in one process: a predictions file holds one call's specs; predict them together", path)
	}
	mode := os.Getenv(Env)
	switch mode {
	case "", "update", "off":
	default:
		return nil, nil, fmt.Errorf("sectorstest: %s=%q: want unset, \"update\" or \"off\"", Env, mode)
	}
	fp, err := Fingerprint()
	if err != nil {
		preds, err := sectors.ModelAll(specs...)
		return preds, []string{fmt.Sprintf("%v: predicted all %d launches", err, len(specs))}, err
	}
	if mode != "" {
		preds, err := sectors.ModelAll(specs...)
		if err != nil || mode == "off" {
			return preds, nil, err
		}
		if err := write(path, fp, specs, preds); err != nil {
			return nil, nil, err
		}
		return preds, []string{fmt.Sprintf("sectorstest: wrote %d predictions to %s", len(specs), path)}, nil
	}
	held, err := read(path, fp)
	var stale *StaleError
	switch {
	case errors.As(err, &stale) || errors.Is(err, fs.ErrNotExist):
		preds, err2 := sectors.ModelAll(specs...)
		return preds, []string{fmt.Sprintf("sectorstest: %v: predicted all %d launches (%s=update rewrites it: make predictions)", err, len(specs), Env)}, err2
	case err != nil:
		return nil, nil, err
	}
	out := make([]sectors.Launch, len(specs))
	var missing, served []int
	for i, s := range specs {
		r, ok := held[key(s)]
		if !ok || !kept(s) {
			missing = append(missing, i)
			continue
		}
		out[i] = r.Launch
		out[i].Traffic = r.Traffic
		served = append(served, i)
	}
	small := checked(specs, served)
	if len(missing) > 0 {
		log = append(log, fmt.Sprintf("sectorstest: %d of %d launches are not in %s: predicted them (make predictions adds them)", len(missing), len(specs), path))
		preds, err := sectors.ModelAll(pick(specs, missing)...)
		if err != nil {
			return nil, log, fmt.Errorf("sectorstest: %w", err)
		}
		for k, i := range missing {
			out[i] = preds[k]
		}
	}
	log = append(log, fmt.Sprintf("sectorstest: %d predictions from %s, %d of them checked against the model", len(served), path, len(small)))
	again, err := sectors.ModelAll(pick(specs, small)...)
	if err != nil {
		return nil, log, fmt.Errorf("sectorstest: %w", err)
	}
	var wrong []string
	for k, i := range small {
		if !equal(again[k], out[i]) {
			wrong = append(wrong, fmt.Sprintf("%s\nfile:  %s\nmodel: %s", specs[i].Brief(), text(out[i]), text(again[k])))
			out[i] = again[k]
		}
	}
	if wrong != nil {
		return out, log, &WrongError{Path: path, Launches: wrong}
	}
	return out, log, nil
}

// WrongError is a current predictions file (its fingerprint the
// source's) that holds for some launch what the model does not predict:
// edited by hand, or written by a model that did not depend on its
// source alone.
type WrongError struct {
	Path string
	// Launches says, for each such launch, what the file and the model hold.
	Launches []string
}

func (e *WrongError) Error() string {
	return fmt.Sprintf("sectorstest: %s holds what the model does not predict, though its fingerprint is the model's source's, for %d launches: rewrite it (make predictions)\n%s",
		e.Path, len(e.Launches), strings.Join(e.Launches, "\n"))
}

// Predict is Load for a test: it logs what Load did, and fails t if the
// file cannot be read or holds a wrong prediction (going on with the
// model's), or if the model fails.
func Predict(t testing.TB, path string, specs []spec.Spec) []sectors.Launch {
	t.Helper()
	preds, log, err := Load(path, specs)
	for _, line := range log {
		t.Log(line)
	}
	var wrong *WrongError
	switch {
	case errors.As(err, &wrong):
		t.Error(err)
	case err != nil:
		t.Fatal(err)
	}
	return preds
}

// checked returns, of the specs served from the file (indices into
// specs), those whose predictions are checked against the model: those
// of up to CheckThreads threads, and the smallest of each kernel that has
// none so small.
func checked(specs []spec.Spec, served []int) []int {
	var out []int
	smallest := map[spec.Kernel]int{}
	covered := map[spec.Kernel]bool{}
	for _, i := range served {
		s := specs[i]
		if s.Threads() <= CheckThreads {
			out = append(out, i)
			covered[s.Kernel] = true
			continue
		}
		if j, ok := smallest[s.Kernel]; !ok || s.Threads() < specs[j].Threads() {
			smallest[s.Kernel] = i
		}
	}
	for k, i := range smallest {
		if !covered[k] {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// equal compares two predictions field by field, the working included,
// as the file writes them.
func equal(a, b sectors.Launch) bool {
	ja, erra := encode(a)
	jb, errb := encode(b)
	return erra == nil && errb == nil && ja == jb
}

// encode is a prediction as a file's record holds it, or why it cannot be.
func encode(p sectors.Launch) (string, error) {
	b, err := json.Marshal(record{Spec: p.Spec, Launch: p, Traffic: p.Traffic})
	return string(b), err
}

// text is encode's record, or its error, for a message.
func text(p sectors.Launch) string {
	s, err := encode(p)
	if err != nil {
		return err.Error()
	}
	return s
}

func pick(specs []spec.Spec, at []int) []spec.Spec {
	out := make([]spec.Spec, len(at))
	for k, i := range at {
		out[k] = specs[i]
	}
	return out
}

// kept reports whether a file may hold the prediction of s: not when s
// reads its indices from a file, whose bytes the fingerprint does not
// cover.
func kept(s spec.Spec) bool { return s.IndexFile == "" }

// key is a spec's map key: its JSON, which names every field that is
// set. A spec that cannot be written (no kernel) keys as its error, which
// no spec's JSON equals.
func key(s spec.Spec) string {
	b, err := json.Marshal(s)
	if err != nil {
		return "\x00" + err.Error()
	}
	return string(b)
}

// StaleError is a predictions file another version of the model's source
// wrote.
type StaleError struct {
	Path      string
	File, Now string // the fingerprints
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s was written by another version of the model (fingerprint %.12s, the source's %.12s)", e.Path, e.File, e.Now)
}

// read returns the records of the file at path, by key, if its
// fingerprint is fp; a *StaleError if it is another.
func read(path, fp string) (map[string]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("sectorstest: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	if !sc.Scan() {
		return nil, fmt.Errorf("sectorstest: %s: empty: want a header line first", path)
	}
	var h header
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil || h.Fingerprint == "" {
		return nil, fmt.Errorf("sectorstest: %s:1: want a header {\"fingerprint\": ...}, have %.80q", path, sc.Text())
	}
	if h.Fingerprint != fp {
		return nil, &StaleError{Path: path, File: h.Fingerprint, Now: fp}
	}
	out := map[string]record{}
	for n := 2; sc.Scan(); n++ {
		var r record
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&r); err != nil {
			return nil, fmt.Errorf("sectorstest: %s:%d: %w", path, n, err)
		}
		if err := r.Spec.Validate(); err != nil {
			return nil, fmt.Errorf("sectorstest: %s:%d: the record's spec: %w", path, n, err)
		}
		out[key(r.Spec)] = r
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sectorstest: %s: %w", path, err)
	}
	return out, nil
}

// write writes the predictions of specs to path under fp, a spec a
// line in the order of its key, so that a rewrite's diff shows what moved.
func write(path, fp string, specs []spec.Spec, preds []sectors.Launch) error {
	lines := map[string][]byte{}
	for i, s := range specs {
		if !kept(s) {
			continue
		}
		b, err := json.Marshal(record{Spec: s, Launch: preds[i], Traffic: preds[i].Traffic})
		if err != nil {
			return fmt.Errorf("sectorstest: %s: %w", s.Brief(), err)
		}
		lines[key(s)] = b
	}
	var buf bytes.Buffer
	h, err := json.Marshal(header{Fingerprint: fp, Note: "the model's predictions, made by the source of this fingerprint (lessons/sectors/sectorstest): `make predictions` rewrites it"})
	if err != nil {
		return fmt.Errorf("sectorstest: %w", err)
	}
	buf.Write(append(h, '\n'))
	for _, k := range slices.Sorted(maps.Keys(lines)) {
		buf.Write(append(lines[k], '\n'))
	}
	if err := atomicfile.WriteBytes(path, 0o644, buf.Bytes()); err != nil {
		return fmt.Errorf("sectorstest: %w", err)
	}
	return nil
}
