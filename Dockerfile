# syntax=docker/dockerfile:1
#
# The GPU memory coalescing course in one image: CUDA (nvcc, and ncu for the
# profiling lessons), Go, JupyterLab with the GoNB kernel, and the course.
#
#   docker build -t coalescing .
#   docker run --gpus all -p 8888:8888 coalescing     # open the http://127.0.0.1:8888/lab?token=... it prints
#   docker build --build-arg BASE_IMAGE=ubuntu:24.04 -t coalescing-cpu .   # no CUDA, and says so
#
# The same image is a JupyterHub single-user image (jupyterhub-singleuser on
# PATH, the kernel installed system-wide, nothing needed in $HOME), and ncu
# works in it given the host's permission: docs/running.md says how.
#
# `make test-image` builds this file with podman on a local Ubuntu 24.04 base
# without CUDA and runs the image as the learner (scripts/test_image.sh says
# what it checks); deploy/ parses it in `make test`. The CUDA base itself,
# --gpus and ncu in a container were not tried where it was written:
# docs/running.md lists what was and was not.

# The base, a build argument: by default NVIDIA's CUDA 13.0 image (here its
# update 13.0.2), the release the course's H200 reference was measured with
# (cuda/NOTES.md: nvcc 13.0); it needs an NVIDIA driver >= 580 on the host.
# The devel variant carries nvcc and, on amd64, Nsight Compute (ncu). A
# plain Ubuntu 24.04 base builds the same image without CUDA (make test-image
# builds on a debootstrapped one; Debian 13 has the same package names): the
# only step that differs is scripts/image_cuda.sh's, and the image then says
# at start and in its health check that it has no CUDA.
ARG BASE_IMAGE=nvidia/cuda:13.0.2-devel-ubuntu24.04
FROM ${BASE_IMAGE}
ARG BASE_IMAGE
LABEL org.opencontainers.image.title="GPU memory coalescing course" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"

ARG DEBIAN_FRONTEND=noninteractive

# python3 (3.12) + venv: JupyterLab. curl, ca-certificates: the Go download
# and the HEALTHCHECK. git: the go command's VCS lookups. tini: PID 1, reaps
# the processes GoNB's cells leave behind. The same names on Ubuntu and Debian.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-venv ca-certificates curl git tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

# CUDA, guarded: on a CUDA base nvcc must compile a kernel and ncu run (ncu
# installed from the base's CUDA release, cuda-nsight-compute-X-Y, when
# missing), else the build fails; on a base without CUDA nothing is
# installed and the image records that it has none. image_cuda.sh says which.
COPY scripts/image_cuda.sh /usr/local/bin/coalesce-image
RUN coalesce-image setup "${BASE_IMAGE}"

# The learner: uid 1000, gid 100 (users), Jupyter's customary jovyan, whose home
# /home/jovyan is also Zero to JupyterHub's default home mount. Ubuntu 24.04
# images come with a user "ubuntu" holding uid 1000: it goes.
ARG NB_USER=jovyan
ARG NB_UID=1000
ARG NB_GID=100
RUN if id -u ubuntu >/dev/null 2>&1; then userdel --remove ubuntu; fi \
 && useradd --create-home --uid "${NB_UID}" --gid "${NB_GID}" --shell /bin/bash "${NB_USER}"

# Go, the version go.mod names (deploy's test keeps the two equal), from the Go
# module proxy's toolchain module golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64:
# the zip `go` itself fetches for GOTOOLCHAIN=go1.26.8. Its SHA-256 below was
# taken from a `go mod download` of that module, which the go command verified
# against the checksum database (h1:ZOmGe1OnfREDMIdb1Qi4G9JSuDPBLGExZMQ4nis1RXM=);
# its bin/go is byte-identical to that of the official go1.26.8.linux-amd64 tarball.
ARG GO_VERSION=1.26.8
ARG GO_ZIP_SHA256=30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7
ARG GOPROXY_URL=https://proxy.golang.org
COPY scripts/install_go.sh /usr/local/lib/coalesce/install_go.sh
RUN GO_VERSION="${GO_VERSION}" GO_ZIP_SHA256="${GO_ZIP_SHA256}" GOPROXY_URL="${GOPROXY_URL}" \
      /usr/local/lib/coalesce/install_go.sh /usr/local/go

# Where everything goes. The same variables drive scripts/install.sh and the
# Makefile, so `make lab`/`make test` inside the container use these too.
#   VENV           JupyterLab, jupyterhub-singleuser (requirements.txt)
#   BIN_DIR        gonb, goimports, gopls (versions pinned in go.mod)
#   KERNEL_PREFIX  /usr/local: the kernelspec lands in /usr/local/share/jupyter,
#                  which Jupyter searches by default: no $HOME install needed
#   GOMODCACHE     every module the course needs, downloaded at build time
#   GOCACHE        compiled packages, warm, writable by the learner
#   GOTOOLCHAIN    local: never download another Go
ENV COURSE_ROOT=/opt/course \
    VENV=/opt/venv \
    BIN_DIR=/opt/gotools \
    KERNEL_PREFIX=/usr/local \
    GOMODCACHE=/opt/go/mod \
    GOCACHE=/opt/go/cache \
    GOTOOLCHAIN=local \
    PIP_NO_CACHE_DIR=1
ENV PATH=/opt/venv/bin:/opt/gotools:/usr/local/go/bin:${PATH}

WORKDIR /opt/course
# Layers from the least to the most often changed, so that a lesson edit
# rebuilds only the last COPY: the dependencies (install.sh: venv, gonb,
# goimports, gopls, the kernelspec; every module), then the course's Go code
# (coalesce and the learner's warm build cache are built from it), then
# everything else (notebooks, docs). install.sh builds as root with its own
# build cache; the learner's GOCACHE is filled below, as the learner.
COPY --chown=${NB_UID}:${NB_GID} go.mod go.sum requirements.txt ./
COPY --chown=${NB_UID}:${NB_GID} scripts/install.sh scripts/
RUN go mod download \
 && GOCACHE=/tmp/gocache-root scripts/install.sh \
 && rm -rf /tmp/gocache-root \
 && env -i HOME=/nonexistent PATH="${PATH}" jupyter kernelspec list --json \
      | python3 -c 'import json,sys; d=json.load(sys.stdin)["kernelspecs"]["gonb"]["resource_dir"]; assert d.startswith("/usr/local/share/jupyter/"), d; print("gonb kernelspec:", d)' \
 && h="$(mktemp -d)" && env -i HOME="$h" PATH="${PATH}" python -c 'from jupyter_server.serverapp import ServerApp as S; a = S(); a.initialize(argv=["--port=0", "--allow-root"]); k = a.kernel_manager.default_kernel_name; assert k == "gonb", k; print("default kernel:", k)' \
 && rm -rf "$h" \
 && jupyterhub-singleuser --version

# The course's Go packages: every directory that holds one (deploy's test
# keeps this list whole), and the scripts. The coalesce command (grade, run,
# model, ...) goes on PATH.
COPY --chown=${NB_UID}:${NB_GID} *.go ./
COPY --chown=${NB_UID}:${NB_GID} calibrate calibrate/
COPY --chown=${NB_UID}:${NB_GID} cmd cmd/
COPY --chown=${NB_UID}:${NB_GID} cuda cuda/
COPY --chown=${NB_UID}:${NB_GID} deploy deploy/
COPY --chown=${NB_UID}:${NB_GID} grader grader/
COPY --chown=${NB_UID}:${NB_GID} internal internal/
COPY --chown=${NB_UID}:${NB_GID} lab lab/
COPY --chown=${NB_UID}:${NB_GID} lessons lessons/
COPY --chown=${NB_UID}:${NB_GID} units units/
COPY --chown=${NB_UID}:${NB_GID} scripts scripts/
RUN GOCACHE=/tmp/gocache-root go build -o /opt/gotools/coalesce ./cmd/coalesce \
 && rm -rf /tmp/gocache-root \
 && install -d -o "${NB_UID}" -g "${NB_GID}" /opt/course /opt/course/notebooks /opt/go/cache

USER ${NB_UID}
# Warm the learner's build cache with what notebook cells compile: the course
# packages at /opt/course, where every notebook builds them from (docker run
# serves them there; under JupyterHub ~/course/go.work points there, so one
# cache serves every learner's home), GoNB's gonbui and the standard library.
RUN go build ./... github.com/janpfeifer/gonb/gonbui

# Everything else: the notebooks (saved in place, the learner's), docs, the
# Makefile; the Go code again, unchanged.
COPY --chown=${NB_UID}:${NB_GID} . /opt/course

ENV SHELL=/bin/bash
WORKDIR /opt/course
EXPOSE 8888
# /api answers without a token. Under JupyterHub the server lives below
# $JUPYTERHUB_SERVICE_PREFIX (Kubernetes ignores HEALTHCHECK; its probes are the hub's).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:8888${JUPYTERHUB_SERVICE_PREFIX:-/}api" && coalesce-image status --brief || exit 1

# tini is PID 1; coalesce-image (scripts/image_cuda.sh) says what CUDA the
# image has (in every server's log: JupyterHub replaces CMD, never the
# ENTRYPOINT), then runs scripts/singleuser.sh, which runs the command;
# under JupyterHub (CMD replaced with jupyterhub-singleuser) it first sets
# up the learner's ~/course (scripts/course_home.sh), and shows the learner
# why when that fails. The default kernel, gonb, is in Jupyter's config
# (/usr/local/etc/jupyter, by install.sh), which no command replaces.
ENTRYPOINT ["tini", "-g", "--", "coalesce-image", "start", "/opt/course/scripts/singleuser.sh"]
# JupyterLab on all interfaces, opening the course's index (the URL printed at
# start, and http://HOST:8888/, lead there). The token is printed at start (or
# set one: docker run -e JUPYTER_TOKEN=...).
CMD ["jupyter", "lab", "--no-browser", "--ServerApp.ip=0.0.0.0", "--ServerApp.port=8888", "--ServerApp.root_dir=/opt/course", "--LabApp.default_url=/lab/tree/notebooks/index.ipynb"]
