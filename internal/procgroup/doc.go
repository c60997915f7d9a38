// Package procgroup runs a program as the leader of a process group of
// its own, so that what it starts goes with it. A tool that runs the real
// program as its child (ncu, compute-sanitizer, the go command's compiler
// and linker), or a learner's program that forks, would otherwise outlive
// a timeout that killed only the process it was started as:
//
//	cmd := exec.CommandContext(ctx, path, args...)
//	procgroup.Own(cmd, syscall.SIGINT) // the context's end interrupts the group
//	err := cmd.Start() ...
//	err = cmd.Wait()
//	if ctx.Err() != nil && !procgroup.Kill(cmd.Process.Pid, 10*time.Second) {
//		// a process of the group would not die
//	}
//
// Where there are no process groups (not unix), Own leaves cmd as it is
// and Kill reports the group gone: the program alone was stopped.
package procgroup
