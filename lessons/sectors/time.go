package sectors

import (
	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/spec"
)

// estimateTime is the time model: a launch costs its launch overhead plus
// the longer of the DRAM traffic at the copy bandwidth and the L1 sector
// traffic at the L2 bandwidth.
func estimateTime(d devices.Profile, s spec.Spec, p Prediction) float64 {
	dram := p.Metrics["dram__bytes_read.sum"] + p.Metrics["dram__bytes_write.sum"]
	t := max(dram/d.Time.CopyBandwidth, float64(p.FetchedBytes)/d.Time.L2Bandwidth)
	return d.Time.LaunchSeconds + t
}
