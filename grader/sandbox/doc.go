// Package sandbox grades a learner's Go kernel without trusting it: the
// kernel's source is vetted, built into a program of its own and run in a
// child process under limits; the child reports what the kernel did, and
// the caller, not the child, judges it.
//
//	b, err := sandbox.NewBatch(ctx, sandbox.Config{}) // once per class: the course built, the machine checked
//	defer b.Close()
//	res, err := b.Run(ctx, sandbox.Kernel{Exercise: id, Learner: "ada", Source: src, Func: "myCopy"})
//	obs, err := exercises.ParseObservation(res.Report) // what the child saw
//	rep := exercises.Judge(id, "ada", obs)              // the verdict, worked out here
//
// # Why a separate process, and why vetting first
//
// A kernel exercise is graded by running the kernel (lessons/simt runs it
// thread by thread; the output and the model's counts decide): there is no
// reading a kernel's grade from its text. The notebook's own result, saved
// in its outputs, is the learner's to edit; running the kernel is a grade,
// and the kernel is hostile until shown otherwise. Go has no in-process
// sandbox: whatever runs in the grader's process can read its files, and
// a data race can forge memory without package unsafe. So it runs in a
// child process, held two ways, each covering the other's gaps.
//
// Statically (Vet), before any build: the source may import only pure
// packages and simt (AllowedImports), which leaves no way to the file
// system, the network, other processes, the runtime or cgo; it may
// declare only funcs, types and consts, so that nothing of it runs before
// main (no var initializers, no init); no go statements, so that no
// goroutine bomb and no data race; no compiler directives (//go:linkname,
// //export, #cgo, //line); and no character that shows a reader other
// code than the compiler reads (Hidden: bidirectional controls, invisible
// and control characters, line separators, the class from Unicode's
// tables). Any name is the learner's to declare but those starting with
// Sandbox_: their code is a package of its own, beside the child's main,
// so a kernel named err or main, a helper named len, shadow nothing.
//
// Dynamically, by the operating system. Every process of a build (the go
// command, and each compiler and linker it runs, through -toolexec) and
// the child start through a helper, this program's own binary run again
// (see helperEnv), which sets their limits before it executes them: the
// address space, CPU time, the size of any file written (so that a 128 MB
// constant is refused as the compiler writes it, never reaching a cache),
// open files, no core file. Each asks to be killed when the process that
// started it dies (PR_SET_PDEATHSIG), and each build and child leads a
// process group killed whole at its deadline: a grader killed mid-build,
// even by SIGKILL, leaves no compiler running. The child also tightens its
// address space to the runtime's reservation plus Config.Memory, sets a
// soft heap limit and a stack limit, and gets an empty environment,
// /dev/null for stdin, a directory of its own, bounded stdout and stderr,
// and, where user namespaces are allowed, a network namespace with no
// interface (Result.Network says which); go build runs offline
// (GOPROXY=off, CGO_ENABLED=0, GOTOOLCHAIN=local, GOWORK=off, GOENV=off),
// in the same namespace where there is one.
//
// # The parent decides
//
// The child calls the grade package's Observe (lessons/exercises): it
// runs the kernel on the learner's variant and writes what happened, the
// output buffers' bytes and the model's counts, to a file the kernel
// cannot reach (it has no os), not to stdout, which it may print to. The
// parent reads at most MaxReport bytes of it and judges it with Judge: the
// reference output and the targets are worked out in the parent, and so
// are the points. A count below what a right output needs (work moved
// into a launch started inside the kernel) is refused there too.
//
// # The caches
//
// The child's module requires the course, whose source is the copy built
// into the binary (coalesce.Source, Config.Course): a grader built from a
// checkout that was moved, or installed without one, still builds
// kernels, against the very code it judges them with; a package missing
// from it stops NewBatch with an error naming it. The user's Go caches are
// never used: the sandbox's directory (Config.CacheDir) holds a base
// cache of the standard library and the course compiled by the sandbox
// itself, bounded (MaxBaseCache); each build gets a clone of it (hard
// links) that goes with the build, so that what a learner's package
// compiles to is measured, held to MaxBuildCache, and removed; the
// children built are kept for reuse by the hash of all they are built
// from, bounded (MaxBinaries), so that two learners with the same source,
// or a class graded again, build once. A kernel the compiler refuses is an
// ErrCompile with the compiler's messages at the kernel's own lines.
//
// # What is isolated, and what is not
//
//   - Isolated: the network (a namespace of its own where user
//     namespaces are allowed; otherwise only the import allowlist keeps
//     package net out, Result.Network says so); the grader's memory, time
//     and disk (every limit above); the grader's environment (empty in the
//     child); the other learners (a directory, a process group and a cache
//     each).
//   - Not isolated: reading files. The child runs as the instructor's
//     user, with the file system as that user sees it: only the import
//     allowlist, not the operating system, keeps the kernel from opening
//     a file (no os, syscall, io or embed). There is no mount namespace,
//     seccomp filter or chroot, and no separate user: a kernel that
//     escaped Go's memory safety (which Vet keeps: no unsafe, no
//     goroutines, no linkname, no assembly) would have the instructor's
//     rights. Where user namespaces are absent (some hubs, most
//     containers) the network is not isolated either. What stays trusted:
//     the Go toolchain, the packages the source may import, simt and the
//     grade package.
package sandbox
