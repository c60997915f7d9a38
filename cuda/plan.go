package cuda

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/coalescing-course/coalesce/lessons/measure"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// plan writes the harness's input line for s on gpu (nil: the spec's own
// device): the kernel's fields as the spec holds them, and every size the
// kernel table derives from them (n and block where they are derived,
// threads, blocks, the block's and the grid's x and y, the dynamic shared
// memory, each buffer's bytes, the memcpy pair), so that the harness
// computes none of them. A gather's indices come from indexFile, which
// must already hold them.
func plan(s spec.Spec, gpu *measure.DeviceInfo, indexFile string) ([]byte, error) {
	var b bytes.Buffer
	put := func(key string, v any) {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		val, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%q:%s", key, val)
	}
	// The spec's own fields, defaults included, but the gather's pattern:
	// the harness reads indices from a file only.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s.String()), &fields); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
	}
	for _, name := range spec.Fields(s.Kernel) {
		switch name {
		case spec.FieldIndexPattern, spec.FieldSeed, spec.FieldIndexFile, spec.FieldDevice:
			continue
		}
		put(name, fields[name])
	}
	if s.Kernel == spec.GatherCopy {
		put(spec.FieldIndexFile, indexFile)
	}
	// A 2D kernel's n and block are derived from rows, cols, tile and
	// block_rows; its body takes pad whether or not the spec has one.
	if spec.Is2D(s.Kernel) {
		put(spec.FieldN, s.N)
		put(spec.FieldBlock, s.Block)
		if !spec.Takes(s.Kernel, spec.FieldPad) {
			put(spec.FieldPad, 0)
		}
	}
	shape := s.Shape()
	if gpu != nil {
		shape = s.ShapeOn(gpu.SMs, gpu.MaxThreadsPerSM)
	}
	put("blocks", shape.Blocks)
	put("threads", shape.Threads)
	put("block_x", shape.BlockX)
	put("block_y", shape.BlockY)
	put("grid_x", shape.GridX)
	put("grid_y", shape.GridY)
	put("shared_bytes", sharedBytes(s))
	for _, buf := range s.Buffers() {
		put("bytes_"+buf.Name, buf.Bytes)
	}
	from, to := s.Memcpy()
	put("memcpy_from", from)
	put("memcpy_to", to)
	return append(append([]byte{'{'}, b.Bytes()...), '}'), nil
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
