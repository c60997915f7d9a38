package units_test

import (
	"fmt"

	"github.com/coalescing-course/coalesce/units"
)

// Each unit alone: three significant digits, rounded half away from zero
// as written, commas, the prefix that suits the value.
func Example() {
	fmt.Println(units.Percent.Format(1.0 / 32))
	fmt.Println(units.Count.Format(1 << 23))
	fmt.Println(units.Ratio.Format(4.4196))
	fmt.Println(units.Multiple.Format(0.90625))
	fmt.Println(units.Seconds.Format(197.04e-6))
	fmt.Println(units.Bandwidth.Format(3.35e12))
	fmt.Println(units.Bytes.Format(1 << 28))
	fmt.Println(units.BinaryBytes.Format(50 << 20))
	fmt.Println(units.Points.Format(12.25))
	// Output:
	// 3.13%
	// 8,388,608
	// 4.42
	// 0.906×
	// 197 µs
	// 3.35 TB/s
	// 268 MB
	// 50 MiB
	// 12.25
}

// A column takes one scaler: one prefix for all its values, which its
// header names once.
func ExampleUnit_Scale() {
	times := []float64{980e-6, 1.2e-3, 50.83e-6}
	s := units.Seconds.Scale(times...)
	fmt.Printf("time (%s)\n", s.Symbol())
	for _, v := range times {
		fmt.Println(s.Number(v))
	}
	// Output:
	// time (µs)
	// 980
	// 1,200
	// 50.8
}

// Machine-readable output keeps every digit.
func ExampleExact() {
	fmt.Println(units.Exact(123456789.5))
	fmt.Println(units.Exact(1.0 / 3))
	// Output:
	// 123456789.5
	// 0.3333333333333333
}

// An equation is true as printed: the factor that rounds to 5 is given
// the digits that make the product come out.
func ExampleProduct() {
	requests, sectors := 2097152.0, 10485759.0
	fmt.Println(units.Product(units.Term{V: sectors, Unit: units.Count, Noun: "sectors"},
		units.Term{V: requests, Unit: units.Count, Noun: "requests"},
		units.Term{V: sectors / requests, Unit: units.Ratio, Noun: "sectors per request"}))
	// Output:
	// 2,097,152 requests × 4.9999995 sectors per request = 10,485,759 sectors
}

func ExampleParse() {
	v, err := units.Parse("197 µs")
	fmt.Println(v.V, v.Unit, err)
	_, err = units.Parse("1,23")
	fmt.Println(err)
	// Output:
	// 0.000197 seconds <nil>
	// units: "1,23": commas stand between groups of three digits
}

func ExampleApart() {
	size, limit := units.Apart(units.BinaryBytes, 10.04*(1<<20), 10<<20)
	fmt.Printf("the file is %s, over the %s limit\n", size, limit)
	// Output:
	// the file is 10.04 MiB, over the 10 MiB limit
}
