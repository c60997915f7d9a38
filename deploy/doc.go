// Package deploy checks how the course is shipped: the Dockerfile at the
// repository root, the scripts it runs, and the install the image relies on.
// There is no Docker engine where the course is developed and tested, so the
// image is checked by reading its recipe instead of building it: its tests
// parse the Dockerfile and require a pinned base image, a non-root user
// before CMD, scripts/install.sh run with the kernelspec installed
// system-wide, EXPOSE 8888, a HEALTHCHECK and jupyterhub-singleuser; and they
// run the scripts the Dockerfile runs (install_go.sh on a fake toolchain,
// course_home.sh and singleuser.sh, and, under `make test-install`,
// install.sh into a temporary prefix as the image does). Under `make
// test-hub`, TestJupyterHub runs a class on a real JupyterHub with the
// course installed that way: local Unix learners log in, work through their
// own servers, restart and receive an updated lesson, and the instructor
// collects and grades (docs/running.md, "The JupyterHub test").
//
// Its tests read the Dockerfile with internal/dockerfile. The package has
// no code of its own.
package deploy
