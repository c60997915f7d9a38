// Package rlimit holds a process that runs untrusted code to limits the
// operating system enforces: its address space, CPU time, the size of the
// files it writes, its open files and no core files (setrlimit(2), for
// the process itself, or prlimit(2), for another), and its death with its
// parent. Two places run learner code in a process of their own and share
// it: lab.Try's child in a notebook, and the grader's sandbox.
//
//	l := rlimit.Limits{CPU: 10, FSize: 64 << 20, NoFile: 64}
//	l.AS, _ = rlimit.Mapped()       // what the Go runtime has reserved already...
//	l.AS += 512 << 20               // ...and the budget on top of it
//	if err := l.Apply(); err != nil { ... }
//
// Limits travel to a child through its environment as Limits.String,
// which Parse reads back. Set limits soft and hard alike: the code
// limited cannot raise them again.
//
// The address space is a bound on memory that the kernel enforces at once
// (an allocation past it fails, and the Go runtime dies with "out of
// memory"); it counts reservations, which the Go runtime makes ahead of
// use (about 1.2 GB at start on linux/amd64, mostly never touched), so a
// budget is set on top of Mapped. Everything here is Linux's; elsewhere
// Apply, Set, Mapped and DieWithParent return ErrUnsupported.
package rlimit
