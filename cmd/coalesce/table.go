package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/coalescing-course/coalesce/lessons/figures"
	"github.com/coalescing-course/coalesce/lessons/sectors"
	"github.com/coalescing-course/coalesce/lessons/spec"
	"github.com/coalescing-course/coalesce/units"
)

func init() {
	commands["table"] = command{summary: "the seed's table of sectors per warp and efficiency, computed by the model", run: runTable}
}

const tableUsage = `usage: coalesce table [-json]

Prints the source page's table of access patterns (sectors per warp, useful
bytes, efficiency, DRAM bytes per useful byte), every figure computed by the
sector model for the H200 profile.
`

// SeedTable lists the rows of the source document's table, as specs large
// enough (64 MiB a buffer, past the L2) that the DRAM column shows a
// streaming launch rather than one that lives in the cache.
var seedTable = []struct{ Pattern, Spec string }{
	{"Coalesced (stride == 1)", `{"kernel":"coalesced_copy","n":16777216}`},
	{"Strided (stride == 32)", `{"kernel":"strided_copy","n":536870912,"stride":32}`},
	{"AoS, single-field update (16-byte stride)", `{"kernel":"update_x_aos","n":16777216}`},
	{"SoA, single-field update", `{"kernel":"update_x_soa","n":16777216}`},
}

type tableRow struct {
	Pattern           string    `json:"pattern"`
	Spec              spec.Spec `json:"spec"`
	SectorsPerWarp    float64   `json:"sectors_per_warp"`
	UsefulBytes       int       `json:"useful_bytes_per_warp"`
	Efficiency        float64   `json:"efficiency"`
	DRAMPerUsefulByte float64   `json:"dram_bytes_per_useful_byte"`
	Device            string    `json:"device"`
}

func runTable(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "write one JSON line per row")
	if err := parseFlags(fs, tableUsage, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("table takes no arguments, got %q", fs.Args())
	}
	var rows []tableRow
	for _, r := range seedTable {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := spec.Parse([]byte(r.Spec))
		if err != nil {
			return fmt.Errorf("table row %q: %w", r.Pattern, err)
		}
		p, err := sectors.Model(s)
		if err != nil {
			return fmt.Errorf("table row %q: %w", r.Pattern, err)
		}
		row := tableRow{Pattern: r.Pattern, Spec: s, Device: s.Device}
		v := figures.Model(p)
		var useful float64
		for _, c := range []struct {
			f   figures.Figure
			dst *float64
		}{
			{figures.LdSectorsPerRequest, &row.SectorsPerWarp},
			{figures.UsefulBytesPerRequest, &useful},
			{figures.Efficiency, &row.Efficiency},
			{figures.DRAMBytesPerUsefulByte, &row.DRAMPerUsefulByte},
		} {
			if *c.dst, err = c.f.Of(v); err != nil {
				return fmt.Errorf("table row %q: %w", r.Pattern, err)
			}
		}
		row.UsefulBytes = int(useful)
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Pattern\tSectors per warp\tUseful bytes\tEfficiency\tDRAM bytes per useful byte (%s)\n", rows[0].Device)
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.Pattern, units.Ratio.Format(r.SectorsPerWarp), units.Count.Format(float64(r.UsefulBytes)), units.Percent.Format(r.Efficiency), units.Ratio.Format(r.DRAMPerUsefulByte))
	}
	return tw.Flush()
}
