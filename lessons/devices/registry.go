package devices

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Course is the profile of the course's own GPU, the one its recording
// (cuda/reference/h200.jsonl) was measured on: the profile a spec
// without "device" gets until something chooses another (Use).
const Course = "h200"

// CourseWhy is Current's reason while no GPU of this machine is chosen.
const CourseWhy = "the course's H200: no GPU of this machine chosen"

// ErrShipped is a Register of a name that a profile built into the course
// already has: a calibrated profile takes a name of its own, so that the
// course's profiles always mean the same numbers.
var ErrShipped = errors.New("devices: a shipped profile has this name")

// reg holds what the program adds to the shipped profiles and which
// profile a spec without "device" gets. The notebooks' kernel, the
// grader's workers and calibrate may touch it at once.
var reg = struct {
	mu      sync.RWMutex
	added   map[string]Profile
	current string
	why     string
}{added: map[string]Profile{}, current: Course, why: CourseWhy}

// Register adds p, validated and copied, to the profiles Lookup, Names
// and Match know, for example one coalesce calibrate measured on this
// machine's GPU. Registering a name again replaces its profile; a shipped
// profile's name is an error wrapping ErrShipped, and so is a driver name
// in p.Match that another profile claims.
func Register(p Profile) error {
	if err := p.Validate(); err != nil {
		return err
	}
	ps, err := shipped()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(ps, func(s Profile) bool { return s.Name == p.Name }) {
		return fmt.Errorf("%w: %q, want a name other than %s", ErrShipped, p.Name, strings.Join(shippedNames(ps), ", "))
	}
	reg.mu.Lock()
	defer reg.mu.Unlock()
	others := slices.Clone(ps)
	for _, a := range reg.added {
		others = append(others, a)
	}
	if err := matchFree(others, p); err != nil {
		return err
	}
	reg.added[p.Name] = p.clone()
	return nil
}

func shippedNames(ps []Profile) []string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// Match returns the profile that describes a GPU the driver calls gpu
// (cudaDeviceProp.name or nvidia-smi's name), ignoring case and the
// spaces around it. A registered profile wins over a shipped one that
// claims the same name: it was measured on this kind of GPU.
func Match(gpu string) (Profile, bool) {
	want := strings.TrimSpace(gpu)
	if want == "" {
		return Profile{}, false
	}
	claims := func(p Profile) bool {
		return slices.ContainsFunc(p.Match, func(m string) bool { return strings.EqualFold(strings.TrimSpace(m), want) })
	}
	reg.mu.RLock()
	for _, name := range slices.Sorted(maps.Keys(reg.added)) {
		if p := reg.added[name]; claims(p) {
			reg.mu.RUnlock()
			return p.clone(), true
		}
	}
	reg.mu.RUnlock()
	ps, _ := shipped()
	for _, p := range ps {
		if claims(p) {
			return p.clone(), true
		}
	}
	return Profile{}, false
}

// Use makes the profile called name the one a spec without "device"
// gets, for the reason why, which Current returns and lab.Status prints
// ("calibrated on this RTX 4090, 2026-12-01").
func Use(name, why string) error {
	if _, err := Lookup(name); err != nil {
		return err
	}
	if strings.TrimSpace(why) == "" {
		return fmt.Errorf("devices: Use(%q) without a reason, want why this profile describes this machine", name)
	}
	reg.mu.Lock()
	reg.current, reg.why = name, why
	reg.mu.Unlock()
	return nil
}

// Current returns the profile a spec without "device" gets and why: the
// course's H200 (Course, CourseWhy) until Use chooses another.
func Current() (Profile, string) {
	reg.mu.RLock()
	name, why := reg.current, reg.why
	reg.mu.RUnlock()
	p, err := Lookup(name)
	if err != nil {
		// Use checked the name, and profiles are never removed: only a
		// broken profiles.json gets here, and every Lookup reports it.
		return Profile{Name: name}, why
	}
	return p, why
}
