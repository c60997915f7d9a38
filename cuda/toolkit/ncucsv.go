package toolkit

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/coalescing-course/coalesce/lessons/metrics"
)

// KernelMetrics is one row of ncu's raw page: one profiled kernel launch.
type KernelMetrics struct {
	ID      int    // ncu's launch ID, in launch order
	Name    string // the kernel's name as ncu prints it
	Metrics metrics.Set
}

// unitScale converts a value printed in unit to the metric's base unit.
// With --print-units base ncu prints bytes, sectors and requests as they
// are; the scaled units are there for a CSV written without it.
var unitScale = map[string]float64{
	"": 1, "byte": 1, "sector": 1, "request": 1, "inst": 1,
	"Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
	"KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30,
	"Ksector": 1e3, "Msector": 1e6, "Gsector": 1e9,
	"Krequest": 1e3, "Mrequest": 1e6, "Grequest": 1e9,
	"Kinst": 1e3, "Minst": 1e6, "Ginst": 1e9,
	"wavefront": 1, "Kwavefront": 1e3, "Mwavefront": 1e6, "Gwavefront": 1e9,
}

// ParseNcuCSV reads what `ncu --csv --page raw` prints: lines of its own
// (==PROF==, ==WARNING==) and, once the program has exited, a CSV table of
// a header row ("ID", ..., "Kernel Name", ..., one column per metric), a
// units row (empty cells under the non-metric columns, "byte", "sector"...)
// and one row per profiled kernel. Numbers may carry thousands separators
// ("1,048,576"). Every metric in want must be a column, and every value a
// number.
func ParseNcuCSV(data []byte, want []string) ([]KernelMetrics, error) {
	// Keep the CSV lines: those starting with a quote. ncu's own messages
	// start with "==", the harness's output goes to a file.
	var table bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if len(line) > 0 && line[0] == '"' {
			table.Write(line)
			table.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		return nil, &OutputError{Tool: "ncu", Msg: err.Error()}
	}
	if table.Len() == 0 {
		return nil, &OutputError{Tool: "ncu", Msg: "no CSV table: did ncu profile any kernel? (ncu prints ==WARNING== No kernels were profiled when the --kernel-name filter matched none)"}
	}
	r := csv.NewReader(&table)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err != nil {
		return nil, &OutputError{Tool: "ncu", Msg: "header row: " + err.Error()}
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	idCol, ok := col["ID"]
	if !ok {
		return nil, &OutputError{Tool: "ncu", Line: 1, Msg: fmt.Sprintf("no \"ID\" column in the header %q", header)}
	}
	nameCol, ok := col["Kernel Name"]
	if !ok {
		return nil, &OutputError{Tool: "ncu", Line: 1, Msg: fmt.Sprintf("no \"Kernel Name\" column in the header %q", header)}
	}
	for _, m := range want {
		if _, ok := col[m]; !ok {
			return nil, &OutputError{Tool: "ncu", Line: 1, Msg: fmt.Sprintf("metric %s not among the columns", m)}
		}
	}
	var units []string
	var rows []KernelMetrics
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &OutputError{Tool: "ncu", Line: line, Msg: err.Error()}
		}
		if len(rec) != len(header) {
			return nil, &OutputError{Tool: "ncu", Line: line, Msg: fmt.Sprintf("%d cells, the header has %d", len(rec), len(header))}
		}
		if strings.TrimSpace(rec[idCol]) == "" {
			// The units row: no ID. It comes once, before the kernels.
			if units != nil || len(rows) > 0 {
				return nil, &OutputError{Tool: "ncu", Line: line, Msg: "a row without an ID"}
			}
			units = rec
			continue
		}
		id, err := strconv.Atoi(strings.TrimSpace(rec[idCol]))
		if err != nil {
			return nil, &OutputError{Tool: "ncu", Line: line, Msg: fmt.Sprintf("ID %q is not an integer", rec[idCol])}
		}
		km := KernelMetrics{ID: id, Name: rec[nameCol], Metrics: metrics.Set{}}
		for _, m := range want {
			unit := ""
			if units != nil {
				unit = strings.TrimSpace(units[col[m]])
			}
			v, err := parseNumber(rec[col[m]], unit)
			if err != nil {
				return nil, &OutputError{Tool: "ncu", Line: line, Msg: fmt.Sprintf("%s: %v", m, err)}
			}
			km.Metrics[m] = v
		}
		if n := len(rows); n > 0 && id <= rows[n-1].ID {
			return nil, &OutputError{Tool: "ncu", Line: line, Msg: fmt.Sprintf("ID %d after ID %d: rows out of launch order", id, rows[n-1].ID)}
		}
		rows = append(rows, km)
	}
	return rows, nil
}

// parseNumber reads an ncu value: "1,048,576", "12.5", in unit.
func parseNumber(cell, unit string) (float64, error) {
	s := strings.ReplaceAll(strings.TrimSpace(cell), ",", "")
	if s == "" || strings.EqualFold(s, "n/a") {
		return 0, fmt.Errorf("no value (%q)", cell)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", cell)
	}
	scale, ok := unitScale[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	return v * scale, nil
}
