package sectors_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/metrics"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The seed's four patterns, counted: the requests and sectors of the
// loads (lessons/figures turns them into sectors per request and
// efficiency).
func ExampleModel_seedTable() {
	rows := []struct{ name, spec string }{
		{"coalesced (stride 1)", `{"kernel":"coalesced_copy","n":1048576}`},
		{"strided (stride 32)", `{"kernel":"strided_copy","n":1048576,"stride":32}`},
		{"AoS, single field (16 B)", `{"kernel":"update_x_aos","n":1048576}`},
		{"SoA, single field", `{"kernel":"update_x_soa","n":1048576}`},
	}
	for _, r := range rows {
		s, _ := spec.Parse([]byte(r.spec))
		p, err := sectors.Model(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-26s %7.0f requests %8.0f sectors\n", r.name, p.Metrics[metrics.LdRequests], p.Metrics[metrics.LdSectors])
	}
	// Output:
	// coalesced (stride 1)         32768 requests   131072 sectors
	// strided (stride 32)           1024 requests    32768 sectors
	// AoS, single field (16 B)     32768 requests   524288 sectors
	// SoA, single field            32768 requests   131072 sectors
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
