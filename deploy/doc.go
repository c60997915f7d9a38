// Package deploy checks how the course is shipped: the Dockerfile at the
// repository root, the scripts it runs, and the install the image relies on.
// There is no Docker engine where the course is developed and tested, so the
// image is checked by reading its recipe instead of building it: its tests
// parse the Dockerfile and require a pinned base image, a non-root user
// before CMD, scripts/install.sh run with the kernelspec installed
// system-wide, EXPOSE 8888, a HEALTHCHECK and jupyterhub-singleuser; and they
// run the scripts the Dockerfile runs (install_go.sh on a fake toolchain,
// course_home.sh, and, under `make test-install`, install.sh into a
// temporary prefix as the image does).
//
// Parse reads a Dockerfile into its instructions, one per logical line:
//
//	FROM nvidia/cuda:13.0.2-devel-ubuntu24.04
//	RUN apt-get update \
//	 && apt-get install -y tini      # one Instruction: RUN, line 2
//	USER 1000
//
// gives Instructions FROM (line 1), RUN (line 2, continuation joined) and
// USER (line 4). Comments and blank lines go; parser directives
// (# syntax=..., # escape=...) are kept in Dockerfile.Directives. It is the
// subset of the Dockerfile syntax this repository uses: heredocs (RUN <<EOF)
// are refused with ErrHeredoc rather than misread. Errors are *ParseError
// values with the line at fault, wrapping one of the Err variables.
package deploy
