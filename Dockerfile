# syntax=docker/dockerfile:1
#
# The GPU memory coalescing course in one image: CUDA (nvcc, and ncu for the
# profiling lessons), Go, JupyterLab with the GoNB kernel, and the course.
#
#   docker build -t coalescing .
#   docker run --gpus all -p 8888:8888 coalescing     # open the http://127.0.0.1:8888/lab?token=... it prints
#
# The same image is a JupyterHub single-user image (jupyterhub-singleuser on
# PATH, the kernel installed system-wide, nothing needed in $HOME), and ncu
# works in it given the host's permission: docs/running.md says how.
#
# This file has never been built where it was written (no Docker engine
# there). deploy/ parses it in `make test`, and CI runs the scripts it runs:
# scripts/install.sh (as `make setup` does), scripts/install_go.sh and
# scripts/course_home.sh. docs/running.md lists what was and was not tried.

# CUDA 13.0 (here its update 13.0.2), the release the course's H200 reference
# was measured with (cuda/NOTES.md: nvcc 13.0); it needs an NVIDIA driver
# >= 580 on the host. The devel variant carries nvcc and, on amd64, Nsight
# Compute: NVIDIA's recipe for it installs cuda-nsight-compute-13-0, which
# provides ncu. The RUN below checks that, and installs that package from
# NVIDIA's apt repository (configured in these images) if ncu is missing.
FROM nvidia/cuda:13.0.2-devel-ubuntu24.04

ARG DEBIAN_FRONTEND=noninteractive

# python3 (3.12) + venv: JupyterLab. curl, ca-certificates: the Go download
# and the HEALTHCHECK. git: the go command's VCS lookups. tini: PID 1, reaps
# the processes GoNB's cells leave behind.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      python3 python3-venv ca-certificates curl git tini \
 && if ! command -v ncu >/dev/null; then \
      apt-get install -y --no-install-recommends cuda-nsight-compute-13-0; \
    fi \
 && if ! command -v ncu >/dev/null; then \
      ncu_bin="$(find /usr/local/cuda/ /opt/nvidia -name ncu -type f -perm -u+x 2>/dev/null | head -n1)"; \
      test -n "$ncu_bin" && ln -s "$ncu_bin" /usr/local/bin/ncu; \
    fi \
 && rm -rf /var/lib/apt/lists/* \
 && nvcc --version && ncu --version

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
# Dependencies first, so that they are cached while only the course changes.
# install.sh builds as root with its own build cache; the learner's warm
# GOCACHE is filled below, as the learner.
COPY go.mod go.sum requirements.txt ./
COPY scripts/install.sh scripts/
RUN go mod download \
 && GOCACHE=/tmp/gocache-root scripts/install.sh \
 && rm -rf /tmp/gocache-root

# The course, the learner's (notebooks are saved in place). install.sh again:
# the same script `make setup` runs; it redoes only what changed (nothing,
# unless it or requirements.txt did). The coalesce command (grade, run,
# model, ...) goes on PATH.
COPY --chown=${NB_UID}:${NB_GID} . /opt/course
RUN GOCACHE=/tmp/gocache-root scripts/install.sh \
 && GOCACHE=/tmp/gocache-root go build -o /opt/gotools/coalesce ./cmd/coalesce \
 && rm -rf /tmp/gocache-root \
 && chown "${NB_UID}:${NB_GID}" /opt/course \
 && install -d -o "${NB_UID}" -g "${NB_GID}" /opt/go/cache \
 && env -i HOME=/nonexistent PATH="${PATH}" jupyter kernelspec list --json \
      | python3 -c 'import json,sys; d=json.load(sys.stdin)["kernelspecs"]["gonb"]["resource_dir"]; assert d.startswith("/usr/local/share/jupyter/"), d; print("gonb kernelspec:", d)' \
 && h="$(mktemp -d)" && env -i HOME="$h" PATH="${PATH}" python -c 'from jupyter_server.serverapp import ServerApp as S; a = S(); a.initialize(argv=["--port=0", "--allow-root"]); k = a.kernel_manager.default_kernel_name; assert k == "gonb", k; print("default kernel:", k)' \
 && rm -rf "$h" \
 && jupyterhub-singleuser --version

USER ${NB_UID}
# Warm the learner's build cache with what notebook cells compile: the course
# packages at /opt/course, where every notebook builds them from (docker run
# serves them there; under JupyterHub ~/course/go.work points there, so one
# cache serves every learner's home), GoNB's gonbui and the standard library.
RUN go build ./... github.com/janpfeifer/gonb/gonbui

ENV SHELL=/bin/bash
WORKDIR /opt/course
EXPOSE 8888
# /api answers without a token. Under JupyterHub the server lives below
# $JUPYTERHUB_SERVICE_PREFIX (Kubernetes ignores HEALTHCHECK; its probes are the hub's).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD curl -fsS -o /dev/null "http://127.0.0.1:8888${JUPYTERHUB_SERVICE_PREFIX:-/}api" || exit 1

# scripts/singleuser.sh runs the command; under JupyterHub (which keeps the
# ENTRYPOINT and replaces CMD with jupyterhub-singleuser) it first sets up the
# learner's ~/course (scripts/course_home.sh), and shows the learner why when
# that fails. The default kernel, gonb, is in Jupyter's config
# (/usr/local/etc/jupyter, by install.sh), which no command replaces.
ENTRYPOINT ["tini", "-g", "--", "/opt/course/scripts/singleuser.sh"]
# JupyterLab on all interfaces, opening the course's index (the URL printed at
# start, and http://HOST:8888/, lead there). The token is printed at start (or
# set one: docker run -e JUPYTER_TOKEN=...).
CMD ["jupyter", "lab", "--no-browser", "--ServerApp.ip=0.0.0.0", "--ServerApp.port=8888", "--ServerApp.root_dir=/opt/course", "--LabApp.default_url=/lab/tree/notebooks/index.ipynb"]
