package coalesce

import "embed"

// Source is the course's own Go source a learner's kernel is built
// against in grader/sandbox's child process: the packages of the module
// that lessons/exercises and lessons/simt import, their files at their
// paths in the module (tests among them; the sandbox copies what a build
// needs). It is in the binary, so that a grader built from a checkout
// that was then moved or deleted, or installed without one, builds the
// kernels against the very code it judges them with. grader/sandbox's
// TestSourceHasTheChildsPackages holds it to their imports.
//
//go:embed lessons/metrics/*.go lessons/devices/*.go lessons/devices/profiles.json
//go:embed units/*.go lessons/spec/*.go lessons/spec/*.s lessons/sectors/*.go lessons/simt/*.go lessons/simt/*.s lessons/exercises/*.go
var Source embed.FS
