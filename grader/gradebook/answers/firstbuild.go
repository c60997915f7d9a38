package answers

import "strings"

// firstBuildCells are the prediction cells of the course's first build,
// which shipped 0 where lessons now ship lab.YourPrediction: the exercise
// ids of each cell, one call a line. Each shipped as
//
//	%%
//	grader.Check("01-sectors/sectors-float", 0)
//
// (commit c0bdccb) and then with lab for grader (8f59cfc to 64ede78),
// until 6cec5eb put the placeholder in. Read from the notebooks of those
// commits: git show COMMIT:notebooks/NAME.ipynb.
var firstBuildCells = [][]string{
	{"01-sectors/sectors-float"},
	{"01-sectors/sectors-double", "01-sectors/sectors-byte"},
	{"02-coalescing/efficiency-coalesced", "02-coalescing/sectors-reverse"},
	{"02-coalescing/sectors-offset-1", "02-coalescing/efficiency-offset-1"},
	{"03-strided/sectors-stride-32", "03-strided/efficiency-stride-2"},
	{"03-strided/slowdown-stride-32"},
	{"04-scattered/sectors-random-perm"},
	{"04-scattered/sectors-warp-shuffle"},
	{"04-scattered/sorted-speedup"},
	{"05-aos-soa/sectors-aos-16", "05-aos-soa/efficiency-aos-24"},
	{"05-aos-soa/soa-speedup"},
	{"06-vectorized/sectors-float4", "06-vectorized/requests-ratio"},
	{"06-vectorized/sum-fields-sector-ratio"},
	{"07-ncu-metric/ld-requests-coalesced", "07-ncu-metric/ld-sectors-stride-2"},
	{"07-ncu-metric/st-sectors-per-request-write-4"},
	{"08-h200/fetch-granularity-ratio", "08-h200/dram-stride-32"},
	{"08-h200/one-float-copy-of-memcpy", "08-h200/block-32-slowdown"},
}

// firstBuildTemplates are those cells' sources, byte for byte, under both
// names the first build called Check by.
var firstBuildTemplates = func() map[string]bool {
	m := map[string]bool{}
	for _, ids := range firstBuildCells {
		for _, pkg := range []string{"grader", "lab"} {
			lines := []string{"%%"}
			for _, id := range ids {
				lines = append(lines, pkg+`.Check("`+id+`", 0)`)
			}
			m[strings.Join(lines, "\n")] = true
		}
	}
	return m
}()

// isFirstBuildTemplate reports whether a code cell's source is a
// prediction cell exactly as the first build shipped it.
func isFirstBuildTemplate(src string) bool { return firstBuildTemplates[src] }
