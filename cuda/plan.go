package cuda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// PlanWriter writes one plan: a flat JSON object of string, integer and
// boolean values, keys in the order written. It is the one input format
// of the course's two CUDA programs, read by src/shared.cuh's JParser and
// Plan: the harness reads a plan a line (plan, below), a learner's
// kernel's program one plan from plan.json (package usercuda). Keys and
// strings are encoded as encoding/json encodes them. A key written twice,
// which the reader refuses, is the error Bytes returns. The zero value is
// an empty plan.
type PlanWriter struct {
	b    bytes.Buffer
	keys map[string]bool
	err  error
}

func (w *PlanWriter) key(key string) {
	if w.keys == nil {
		w.keys = map[string]bool{}
	}
	if w.keys[key] && w.err == nil {
		w.err = fmt.Errorf("cuda: plan: the key %q written twice", key)
	}
	w.keys[key] = true
	if w.b.Len() > 0 {
		w.b.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	w.b.Write(k)
	w.b.WriteByte(':')
}

// Integer writes key with the integer v.
func (w *PlanWriter) Integer(key string, v int64) {
	w.key(key)
	w.b.WriteString(strconv.FormatInt(v, 10))
}

// Text writes key with the string v.
func (w *PlanWriter) Text(key, v string) {
	w.key(key)
	s, _ := json.Marshal(v)
	w.b.Write(s)
}

// Flag writes key with the boolean v.
func (w *PlanWriter) Flag(key string, v bool) {
	w.key(key)
	w.b.WriteString(strconv.FormatBool(v))
}

// Bytes returns the plan as one line of JSON, without a newline.
func (w *PlanWriter) Bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return append(append([]byte{'{'}, w.b.Bytes()...), '}'), nil
}

// plan writes the harness's input line for s on gpu (nil: the spec's own
// device): the kernel's fields as the spec holds them, and every size the
// kernel table derives from them (n and block where they are derived,
// threads, blocks, the block's and the grid's x and y, the dynamic shared
// memory, each buffer's bytes, the memcpy pair), so that the harness
// computes none of them. A gather's indices come from indexFile, which
// must already hold them.
func plan(s spec.Spec, gpu *measure.DeviceInfo, indexFile string) ([]byte, error) {
	var w PlanWriter
	// The spec's own fields, defaults included, but the gather's pattern:
	// the harness reads indices from a file only.
	dec := json.NewDecoder(strings.NewReader(s.String()))
	dec.UseNumber()
	var fields map[string]any
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	for _, name := range spec.Fields(s.Kernel) {
		switch name {
		case spec.FieldIndexPattern, spec.FieldSeed, spec.FieldIndexFile, spec.FieldDevice:
			continue
		}
		switch v := fields[name].(type) {
		case string:
			w.Text(name, v)
		case bool:
			w.Flag(name, v)
		case json.Number:
			i, err := v.Int64()
			if err != nil {
				return nil, fmt.Errorf("cuda: plan: field %s = %s: want an integer", name, v)
			}
			w.Integer(name, i)
		default:
			return nil, fmt.Errorf("cuda: plan: field %s = %v: want a string, an integer or a boolean", name, v)
		}
	}
	if s.Kernel == spec.GatherCopy {
		w.Text(spec.FieldIndexFile, indexFile)
	}
	// A 2D kernel's n and block are derived from rows, cols, tile and
	// block_rows; its body takes pad whether or not the spec has one.
	if spec.Is2D(s.Kernel) {
		w.Integer(spec.FieldN, s.N)
		w.Integer(spec.FieldBlock, int64(s.Block))
		if !spec.Takes(s.Kernel, spec.FieldPad) {
			w.Integer(spec.FieldPad, 0)
		}
	}
	shape := s.Shape()
	if gpu != nil {
		shape = s.ShapeOn(gpu.SMs, gpu.MaxThreadsPerSM)
	}
	w.Integer("blocks", shape.Blocks)
	w.Integer("threads", shape.Threads)
	w.Integer("block_x", shape.BlockX)
	w.Integer("block_y", shape.BlockY)
	w.Integer("grid_x", shape.GridX)
	w.Integer("grid_y", shape.GridY)
	w.Integer("shared_bytes", sharedBytes(s))
	for _, buf := range s.Buffers() {
		w.Integer("bytes_"+buf.Name, buf.Bytes)
	}
	from, to := s.Memcpy()
	w.Text("memcpy_from", from)
	w.Text("memcpy_to", to)
	return w.Bytes()
}

// sharedBytes is the dynamic shared memory a block of s takes: the
// transpose_tiled square of tile rows of tile+pad floats; none for the
// other kernels.
func sharedBytes(s spec.Spec) int64 {
	if s.Kernel != spec.TransposeTiled {
		return 0
	}
	return 4 * int64(s.Tile) * int64(s.Tile+s.Pad)
}

// Prepared is specs made ready for the harness: each valid spec's plan,
// and the index files of the gathers written to a directory that Close
// removes when Prepare made it.
type Prepared struct {
	Specs []spec.Spec // as given
	Lines [][]byte    // the harness's input, one plan per valid spec
	Index []int       // Lines[i] is the plan of Specs[Index[i]]
	Errs  []error     // Errs[i] is why Specs[i] is not sent, or nil
	dir   string
}

// Prepare validates every spec, writes the index files of the gathers that
// use a pattern, and plans each launch for gpu (nil: each spec's own
// device, as `coalesce run -emit` does without one). dir is where the
// index files go: "" makes (and Close removes) a temporary directory.
func Prepare(specs []spec.Spec, gpu *measure.DeviceInfo, dir string) (*Prepared, error) {
	p := &Prepared{Specs: specs, Errs: make([]error, len(specs))}
	for i, s := range specs {
		if err := s.Validate(); err != nil {
			p.Errs[i] = err
			continue
		}
		indexFile := s.IndexFile
		if s.Kernel == spec.GatherCopy {
			idx, err := s.Indices()
			if err != nil {
				p.Errs[i] = err
				continue
			}
			if indexFile == "" {
				if dir == "" {
					d, err := os.MkdirTemp("", "coalesce-idx-")
					if err != nil {
						p.Close()
						return nil, fmt.Errorf("cuda: index files: %w", err)
					}
					dir, p.dir = d, d
				}
				indexFile = filepath.Join(dir, "idx-"+strconv.Itoa(i+1)+".bin")
				if err := spec.WriteIndexFile(indexFile, idx); err != nil {
					p.Close()
					return nil, fmt.Errorf("cuda: index files: %w", err)
				}
			}
			if indexFile, err = filepath.Abs(indexFile); err != nil {
				p.Errs[i] = err
				continue
			}
		}
		line, err := plan(s, gpu, indexFile)
		if err != nil {
			p.Errs[i] = err
			continue
		}
		p.Lines = append(p.Lines, line)
		p.Index = append(p.Index, i)
	}
	return p, nil
}

// Input returns the harness's input: the plans, one per line.
func (p *Prepared) Input() []byte {
	var b bytes.Buffer
	for _, l := range p.Lines {
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// launches returns a Launch per spec, with Error set for those not sent.
func (p *Prepared) launches() []measure.Launch {
	ls := make([]measure.Launch, len(p.Specs))
	for i, s := range p.Specs {
		ls[i].Spec = s
		if p.Errs[i] != nil {
			ls[i].Error = p.Errs[i].Error()
		}
	}
	return ls
}

// Close removes the index files Prepare wrote into a directory of its own.
func (p *Prepared) Close() error {
	if p.dir == "" {
		return nil
	}
	return os.RemoveAll(p.dir)
}
