package sectors_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The seed's table, computed: the four patterns a warp of 4-byte accesses
// can take, with the sectors each warp touches and the share of fetched
// bytes the warp uses.
func ExamplePredict_seedTable() {
	rows := []struct{ name, spec string }{
		{"coalesced (stride 1)", `{"kernel":"coalesced_copy","n":1048576}`},
		{"strided (stride 32)", `{"kernel":"strided_copy","n":1048576,"stride":32}`},
		{"AoS, single field (16 B)", `{"kernel":"update_x_aos","n":1048576}`},
		{"SoA, single field", `{"kernel":"update_x_soa","n":1048576}`},
	}
	for _, r := range rows {
		s, _ := spec.Parse([]byte(r.spec))
		p, err := sectors.Predict(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-26s %2.0f sectors/warp  %5.1f%%\n", r.name, p.LdSectorsPerRequest, 100*p.Efficiency)
	}
	// Output:
	// coalesced (stride 1)        4 sectors/warp  100.0%
	// strided (stride 32)        32 sectors/warp   12.5%
	// AoS, single field (16 B)   16 sectors/warp   25.0%
	// SoA, single field           4 sectors/warp  100.0%
}

// One warp, by hand: 32 lanes reading floats 32 apart touch 32 sectors.
func ExampleCoalesce() {
	w := sectors.Warp{Size: 4, Active: sectors.AllLanes}
	for lane := range sectors.WarpSize {
		w.Addr[lane] = uint64(lane) * 32 * 4
	}
	a, _ := sectors.Coalesce(w)
	fmt.Println(len(a.Sectors), "sectors,", a.Lines, "lines,", a.UsefulBytes, "of", a.FetchedBytes(), "bytes used")
	// Output: 32 sectors, 32 lines, 128 of 1024 bytes used
}
