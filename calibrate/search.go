package calibrate

import (
	"math"

	"github.com/coalescing-course/coalesce/lessons/devices"
	"github.com/coalescing-course/coalesce/lessons/measure"
)

// search minimises cost over the parameters ps of p, coarse then fine:
// each round tries points values of each parameter in turn across its
// window, the others held, and keeps the best; the next round narrows
// every window to one step either side of the best. The first window is
// the parameter's whole range and the search starts in its middle, so p's
// own values of ps do not matter. It returns the best profile and its
// cost.
func search(p devices.Profile, ps []param, info measure.DeviceInfo, rounds, points int, cost func(devices.Profile) float64) (devices.Profile, float64) {
	type window struct{ lo, hi, min, max float64 }
	in := func(q param, v float64) float64 {
		if q.log {
			return math.Log(v)
		}
		return v
	}
	out := func(q param, x float64) float64 {
		if q.log {
			return math.Exp(x)
		}
		return x
	}
	ws := make([]window, len(ps))
	for i, q := range ps {
		lo, hi := in(q, q.lo(info)), in(q, q.hi(info))
		ws[i] = window{lo, hi, lo, hi}
		// Start in the middle, not at p's value: a refit of a profile
		// must find its numbers, not be handed them.
		q.set(&p, out(q, (lo+hi)/2))
	}
	best := cost(p)
	for range rounds {
		for i, q := range ps {
			step := (ws[i].hi - ws[i].lo) / float64(points-1)
			for k := range points {
				c := p
				q.set(&c, out(q, ws[i].lo+float64(k)*step))
				if v := cost(c); v < best {
					best, p = v, c
				}
			}
		}
		for i, q := range ps {
			step := (ws[i].hi - ws[i].lo) / float64(points-1)
			x := in(q, q.get(&p))
			ws[i].lo, ws[i].hi = max(ws[i].min, x-step), min(ws[i].max, x+step)
		}
	}
	return p, best
}
