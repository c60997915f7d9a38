//go:build !linux

package rlimit

// Apply cannot set limits here.
func (l Limits) Apply() error { return ErrUnsupported }

// Set cannot set limits here.
func (l Limits) Set(int) error { return ErrUnsupported }

// Mapped cannot read the address space here.
func Mapped() (uint64, error) { return 0, ErrUnsupported }

// DieWithParent cannot ask for it here.
func DieWithParent() error { return ErrUnsupported }
