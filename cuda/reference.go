package cuda

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/coalescing-course/coalesce/lessons/spec"
)

// Provenance says where a set of measurements comes from: which GPU, which
// software, when, and the command that made them.
type Provenance struct {
	Device DeviceInfo `json:"device"`
	// Driver is the driver version nvidia-smi reports ("580.159.04").
	Driver string `json:"driver,omitempty"`
	// CUDA is the runtime the harness was linked with ("13.0").
	CUDA string `json:"cuda"`
	Nvcc string `json:"nvcc"`
	Ncu  string `json:"ncu,omitempty"`
	// Clocks are nvidia-smi's clock readings (and power, temperature),
	// taken as the run ended.
	Clocks map[string]string `json:"clocks,omitempty"`
	// HarnessArch are the flags the harness was built for, HarnessKey the
	// content hash of its build (sources, nvcc version, flags).
	HarnessArch string `json:"harness_arch"`
	HarnessKey  string `json:"harness_key"`
	// Timing describes how times were taken.
	Timing string `json:"timing"`
	// Profiling is the ncu command line the metrics come from, the
	// harness's path shortened to "harness".
	Profiling string `json:"profiling,omitempty"`
	Date      string `json:"date"` // RFC 3339, UTC
	Command   string `json:"command"`
}

// CollectProvenance gathers what is known about the GPU, its driver and
// the tools. ncu may be nil (no metrics); nvidia-smi is optional.
func (g *GPU) CollectProvenance(ctx context.Context, ncu *Ncu, command string) Provenance {
	p := Provenance{
		Device:      g.Info,
		CUDA:        CUDAVersion(g.Info.RuntimeVersion),
		Nvcc:        g.Harness.Nvcc,
		HarnessArch: strings.Join(g.Harness.Arch, " "),
		HarnessKey:  g.Harness.Key,
		Date:        time.Now().UTC().Format(time.RFC3339),
		Command:     command,
	}
	reps := g.Reps
	if reps == 0 {
		reps = 20
	}
	warm := g.Warmup
	if warm == 0 {
		warm = 3
	}
	p.Timing = fmt.Sprintf("median of %d launches, each between a CUDA event pair, after %d warm-up launches", reps, warm)
	if !g.NoFlush {
		p.Timing += "; the L2 flushed (a read of twice its size) before every launch"
	}
	if ncu != nil {
		if out, err := ncu.VersionCmd().Run(ctx); err == nil {
			p.Ncu = versionLine(string(out))
		}
		p.Profiling = "ncu " + strings.Join(ProfileArgs("harness", []string{"--profile"}), " ")
	}
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		q := "driver_version,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,pstate,power.draw,temperature.gpu"
		inv := Invocation{Tool: "nvidia-smi", Path: smi, Args: []string{"--query-gpu=" + q, "--format=csv,noheader"}, Timeout: 30 * time.Second}
		if out, err := inv.Run(ctx); err == nil {
			vals := strings.Split(strings.TrimSpace(lastLine(string(out))), ",")
			keys := strings.Split(q, ",")
			if len(vals) == len(keys) {
				p.Clocks = map[string]string{}
				for i, k := range keys {
					v := strings.TrimSpace(vals[i])
					if k == "driver_version" {
						p.Driver = v
						continue
					}
					p.Clocks[k] = v
				}
			}
		}
	}
	return p
}

// CUDAVersion writes a CUDA version as the runtime encodes it (13000) the
// way people do (13.0).
func CUDAVersion(v int) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10)
}

// Reference is a set of measurements recorded on one GPU, with their provenance.
type Reference struct {
	Provenance Provenance `json:"provenance"`
	Records    []Result   `json:"records"`

	index map[string]int
}

// Label names the reference for a header line: "recorded on NVIDIA H200, 2026-11-29".
func (r *Reference) Label() string {
	date := r.Provenance.Date
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		date = t.Format(time.DateOnly)
	}
	return fmt.Sprintf("recorded on %s, %s", r.Provenance.Device.GPU, date)
}

// SpecKey is how a spec is looked up: its normalized JSON, every default filled in.
func SpecKey(s spec.Spec) string { return s.String() }

// Lookup returns the record of s, measured when the reference was made.
func (r *Reference) Lookup(s spec.Spec) (Result, bool) {
	if r.index == nil {
		r.index = make(map[string]int, len(r.Records))
		for i, rec := range r.Records {
			r.index[SpecKey(rec.Spec)] = i
		}
	}
	i, ok := r.index[SpecKey(s)]
	if !ok {
		return Result{}, false
	}
	return r.Records[i], true
}

// ReadReference parses a reference file (see WriteTo for its layout).
func ReadReference(rd io.Reader) (*Reference, error) {
	var ref Reference
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ref); err != nil {
		return nil, fmt.Errorf("cuda: reading the reference: %w", err)
	}
	if ref.Provenance.Device.GPU == "" || ref.Provenance.Date == "" || ref.Provenance.Command == "" {
		return nil, errors.New("cuda: reference without provenance (GPU, date and command are required)")
	}
	return &ref, nil
}

// WriteTo writes the reference as JSON with one record per line, so that a
// regenerated reference diffs line by line.
func (r *Reference) WriteTo(w io.Writer) (int64, error) {
	var b bytes.Buffer
	prov, err := json.MarshalIndent(r.Provenance, "  ", "  ")
	if err != nil {
		return 0, err
	}
	b.WriteString("{\n  \"provenance\": ")
	b.Write(prov)
	b.WriteString(",\n  \"records\": [\n")
	for i, rec := range r.Records {
		line, err := json.Marshal(rec)
		if err != nil {
			return 0, err
		}
		b.WriteString("    ")
		b.Write(line)
		if i < len(r.Records)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]\n}\n")
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// ReferenceFile is the recorded reference inside Sources' sibling
// directory reference/, regenerated with
//
//	coalesce run -ncu -record cuda/reference/h200.json cuda/reference/sweep.jsonl
//
// on a machine with an H200, nvcc and ncu.
const ReferenceFile = "reference/h200.json"

// referenceFS holds reference/: the sweep's specs and, once a device run
// has recorded them, their measurements.
//
//go:embed reference
var referenceFS embed.FS

var (
	recordedOnce sync.Once
	recorded     *Reference
	recordedErr  error
)

// Recorded returns the reference recorded on the course's H200, built into
// the binary. A build made before the first recording gives ErrNoReference.
func Recorded() (*Reference, error) {
	recordedOnce.Do(func() {
		data, err := fs.ReadFile(referenceFS, ReferenceFile)
		if err != nil {
			recordedErr = fmt.Errorf("cuda: %w: %s is not in this build", ErrNoReference, ReferenceFile)
			return
		}
		recorded, recordedErr = ReadReference(bytes.NewReader(data))
	})
	return recorded, recordedErr
}
