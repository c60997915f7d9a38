// Package deploy checks how the course is shipped: the Dockerfile at the
// repository root, the scripts it runs, and the install the image relies on.
// Its tests parse the Dockerfile (with internal/dockerfile) and require the
// base as a build argument defaulting to a pinned nvidia/cuda devel image,
// CUDA confined to one guarded step, the Go code copied before the build
// cache is warmed and the notebooks last, the learner owning the course, a
// non-root user before CMD, scripts/install.sh run with the kernelspec
// installed system-wide, EXPOSE 8888, a HEALTHCHECK that says the image's
// CUDA, and jupyterhub-singleuser; and they run the scripts the Dockerfile
// runs (image_cuda.sh and install_go.sh on fake tools, course_home.sh and singleuser.sh, and,
// under `make test-install`, install.sh into a temporary prefix as the image
// does). Under `make test-hub`, TestJupyterHub runs a class on a real
// JupyterHub with the course installed that way: local Unix learners log
// in, work through their own servers, restart and receive an updated
// lesson, and the instructor collects and grades (docs/running.md, "The
// JupyterHub test").
//
// Building and running the image itself takes root, podman and minutes:
// `make test-image` (scripts/test_image.sh) does it, outside `go test`.
// The package has no code of its own.
package deploy
