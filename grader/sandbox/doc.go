// Package sandbox grades a learner's Go kernel without trusting it: the
// kernel's source is vetted, built into a program of its own, and run in a
// separate process with limits, which writes the exercise's report.
//
// # Why a separate process, and why vetting first
//
// A kernel exercise is graded by running the kernel (lessons/simt runs it
// thread by thread; the output and the model's counts decide): there is no
// reading a kernel's grade from its text. Of the two ways to grade one the
// learner did not run in front of us:
//
//   - The notebook's own result, saved in its outputs, is the learner's to
//     edit: signed by nothing the learner does not control, since the
//     notebook runs under the learner's account with the signing key in
//     reach. It is evidence, as the attempt records are, not a grade.
//   - Running the kernel is a grade, and the kernel is hostile until shown
//     otherwise. Go has no in-process sandbox: whatever runs in the
//     grader's process can read its files, and a data race can forge
//     memory without package unsafe. So it runs in a child process.
//
// The child is held two ways, each covering the other's gaps. Statically
// (Vet), before any build: the source may import only pure packages and
// simt (AllowedImports), which leaves no way to the file system, the
// network, other processes, the runtime or cgo; it may declare only funcs,
// types and consts, so that nothing of it runs before main (no var
// initializers, no init); no go statements, so that no goroutine bomb and
// no data race; no compiler directives (//go:linkname, //export, #cgo,
// //line). Dynamically, by the operating system: main, generated,
// limits its own process before it calls the kernel (RLIMIT_AS,
// RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, no core files, a soft heap
// limit and a stack limit), and the parent gives it an empty environment,
// /dev/null for stdin, a temporary directory, a process group killed
// whole at the wall-clock limit, bounded stdout and stderr, and where user
// namespaces are allowed, a network namespace of its own (Result.Network
// says which). Its report goes to a file in its directory, not to
// stdout, which the kernel may print to.
//
// What stays trusted: the compiler and the packages the source may
// import, simt included, and the package whose Grade the child calls.
// The kernel can read nothing but its arguments, and the grade is the
// child's report of what Grade found.
//
// # The child
//
// The kernel's source (its imports, funcs, types and consts, no package
// clause) becomes kernel.go of a module in a temporary directory, with
// main.go (childMain) and a go.mod that requires the course's module,
// replaced by the course's source tree (Config.CourseRoot), whose go.sum
// it copies. go build runs offline (GOPROXY=off, CGO_ENABLED=0,
// GOTOOLCHAIN=local, GOWORK=off) under a timeout, with the user's build
// and module caches: the course's dependencies are there already. A
// kernel the compiler refuses is an ErrCompile with the compiler's
// messages at the kernel's own lines.
package sandbox
