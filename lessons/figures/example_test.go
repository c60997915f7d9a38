package figures_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// The seed's table, computed: the four patterns a warp of 4-byte accesses
// can take, with the sectors each load request touches and the share of
// fetched bytes the warp uses.
func Example_seedTable() {
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
		v := figures.Model(p)
		per, _ := figures.LdSectorsPerRequest.Of(v)
		eff, _ := figures.Efficiency.Of(v)
		fmt.Printf("%-26s %2s sectors/warp  %5s\n", r.name, figures.LdSectorsPerRequest.Format(per), figures.Efficiency.Format(eff))
	}
	// Output:
	// coalesced (stride 1)        4 sectors/warp   100%
	// strided (stride 32)        32 sectors/warp  12.5%
	// AoS, single field (16 B)   16 sectors/warp    25%
	// SoA, single field           4 sectors/warp   100%
}
