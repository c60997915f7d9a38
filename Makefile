# Coalescing course: notebook environment and test entry points.
#
#   make setup           venv + gonb/goimports/gopls + GoNB kernel (scripts/install.sh; fast when done)
#   make lab             JupyterLab on notebooks/index.ipynb, http://127.0.0.1:8888 (PORT=, HOST=, LAB_ARGS=)
#   make test            every test suite (the prerequisites of `test`); CI runs it via .ci/run
#   make test-go         go vet + go test
#   make test-notebooks  clean-notebook check + headless execution of notebooks/*.ipynb
#                        (NOTEBOOKS="notebooks/a.ipynb ..." to pick, NOTEBOOK_TIMEOUT=s per cell,
#                        NOTEBOOK_TOTAL_BUDGET=s for all, default 240); also fails a markdown number
#                        no cell writes or prints, and measured specs that differ from
#                        lab/testdata/notebook-specs.jsonl
#   make test-gpu        every notebook live on this machine's GPU (nvidia-smi, nvcc, ncu), strictly:
#                        COALESCE_MEASURE=strict fails a cell that would fall back on the recording;
#                        log in build/gpu/test-gpu.log (scripts/test_gpu.sh says what it holds)
#   make gpu-bundle      .gpubundle/: Go, modules, gonb and wheels for a GPU machine without Go or
#                        network; there, scripts/gpu_unpack.sh installs them and runs make test-gpu
#   make notebook-specs  rewrite lab/testdata/notebook-specs.jsonl from a run of every notebook
#   make test-install    install.sh into a temporary system-wide-like prefix, as the Dockerfile runs it; then,
#                        as root, the image's learner (uid 1000): a notebook and the browser test against it
#   make test-image      the image built with podman from the Dockerfile on a local Ubuntu 24.04 base (no
#                        CUDA) and run as the learner: health check, browser test, every notebook and the
#                        grade line inside it; log in build/image/test-image.log (root; not in make test)
#   make test-browser    JupyterLab in headless Chromium: index + first lesson, run all, check, screenshots
#                        in build/browser/ (BROWSER_NOTEBOOKS="..." to pick; installs chromium as root)
#   make compare         model beside the recorded (or live) measurement, every spec of the sweep
#   make reference       re-record cuda/reference/h200.jsonl on a GPU machine (nvcc, ncu)
#   make clean           removes build/ ;  make distclean  also the repo-local .venv and .cache
#
# Install locations can be moved (e.g. in a Docker image) with VENV, BIN_DIR, KERNEL_PREFIX.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

ROOT := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
VENV ?= $(ROOT)/.venv
BIN_DIR ?= $(ROOT)/.cache/bin
KERNEL_PREFIX ?= $(VENV)
PYTHON ?= python3
export VENV BIN_DIR KERNEL_PREFIX PYTHON

# Jupyter looks for the GoNB kernelspec where install.sh put it, not in $HOME.
export JUPYTER_PATH := $(KERNEL_PREFIX)/share/jupyter
export JUPYTER_PLATFORM_DIRS := 1
export PATH := $(BIN_DIR):$(PATH)

# Deterministic Go builds and tests: never edit go.mod/go.sum implicitly, no VCS
# stamping (results must not depend on the git state), no test result caching.
export GOFLAGS := -mod=readonly -buildvcs=false
GO_TEST_FLAGS ?= -count=1 -timeout=10m

VPY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8888
LAB_ARGS ?=
LAB_NOTEBOOK ?= notebooks/index.ipynb
NOTEBOOKS ?=
NOTEBOOK_TIMEOUT ?= 120
export NOTEBOOK_TIMEOUT
# Jupyter refuses to run as root unless told to (Docker, CI).
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

# The browser test: Debian's Chromium, driven by Playwright (requirements-test.txt).
CHROMIUM ?= /usr/bin/chromium
BROWSER_NOTEBOOKS ?=
export CHROMIUM BROWSER_NOTEBOOKS
TEST_REQ_STAMP := $(VENV)/.coalesce-test-requirements.sha256

.PHONY: help setup lab test test-go test-notebooks test-gpu gpu-bundle notebook-specs check-notebooks test-install test-image test-browser \
	chromium test-requirements clean distclean

help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))

setup:
	@$(ROOT)/scripts/install.sh

# Before starting, compile the lessons (best effort) so the first notebook cells are quick.
lab: setup
	@cd $(ROOT) && go build ./lessons/... 2>/dev/null || echo "make lab: warning: lessons/... does not build (see make test-go)" >&2
	cd $(ROOT) && exec $(VENV)/bin/jupyter lab --ServerApp.root_dir=$(ROOT) \
	  --ServerApp.ip=$(HOST) --ServerApp.port=$(PORT) --ServerApp.port_retries=0 \
	  --MultiKernelManager.default_kernel_name=gonb \
	  $(ALLOW_ROOT) $(LAB_ARGS) $(LAB_NOTEBOOK)

# Every suite is a prerequisite of `test`; add new ones (browser, grader, ...) here.
test: test-go test-notebooks test-browser test-install

test-go:
	go vet ./...
	go test $(GO_TEST_FLAGS) ./...

check-notebooks:
	@$(PYTHON) scripts/check_clean_notebooks.py

# Without NOTEBOOKS, also a notebook with no setup cell (the kernel's go.work).
test-notebooks: setup check-notebooks
	@$(VPY) scripts/run_notebooks.py $(NOTEBOOKS)
	@$(if $(NOTEBOOKS),,$(VPY) scripts/run_notebooks.py scripts/testdata/no-setup.ipynb)

# Not in `test`: it needs a GPU. The tools are looked for before setup.
test-gpu:
	@scripts/test_gpu.sh --check
	@$(MAKE) setup check-notebooks
	@scripts/test_gpu.sh

gpu-bundle:
	@scripts/gpu_bundle.sh

# The specs the notebooks measure, for lab's TestGPUNotebookSpecs (COALESCE_LIVE_TEST=1 on a GPU).
notebook-specs: setup
	@$(VPY) scripts/run_notebooks.py --update-specs

# The Dockerfile's install step, tested: deploy's TestInstallIntoPrefix.
test-install: setup
	COALESCE_INSTALL_TEST=1 go test $(GO_TEST_FLAGS) -run '^(TestInstallIntoPrefix|TestNonRootLearner)$$' ./deploy

# Not in `test`: it takes minutes and root (scripts/test_image.sh says what it checks).
test-image: setup chromium test-requirements
	@scripts/test_image.sh

test-browser: setup chromium test-requirements
	@$(VPY) scripts/browser_test.py

# Debian's chromium, installed when missing and we are root (CI is); without
# root the browser test says loudly that it skipped (under CI=true it fails).
chromium:
	@if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "make: $(CHROMIUM) missing: installing Debian's chromium (apt-get)"; \
	  log="$$(mktemp)"; \
	  if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } >"$$log" 2>&1; then \
	    cat "$$log" >&2; rm -f "$$log"; echo "make: installing chromium failed" >&2; exit 1; \
	  fi; \
	  rm -f "$$log"; "$(CHROMIUM)" --version 2>/dev/null | grep -i chromium || true; \
	else \
	  echo "make: $(CHROMIUM) missing and not root (or no apt-get): cannot install it" >&2; \
	fi

# Playwright into the venv, once per requirements-test.txt (+ requirements.txt).
test-requirements: setup
	@want="$$(cat requirements.txt requirements-test.txt | sha256sum | cut -d' ' -f1)"; \
	if [ "$$(cat $(TEST_REQ_STAMP) 2>/dev/null)" != "$$want" ]; then \
	  echo "make: installing requirements-test.txt into $(VENV)"; \
	  $(VPY) -m pip install --disable-pip-version-check --no-input --quiet \
	    -r requirements.txt -r requirements-test.txt; \
	  echo "$$want" > $(TEST_REQ_STAMP); \
	fi

clean:
	rm -rf $(ROOT)/build

distclean: clean
	rm -rf $(ROOT)/.venv $(ROOT)/.cache

# The recorded H200 reference, re-measured: on a GPU machine with nvcc and ncu
# on the PATH. It rewrites cuda/reference/h200.jsonl; never edit that by hand.
.PHONY: reference compare
reference:
	go build -o $(ROOT)/build/coalesce ./cmd/coalesce
	$(ROOT)/build/coalesce run -ncu -record cuda/reference/h200.jsonl cuda/reference/sweep.jsonl > $(ROOT)/build/sweep_results.jsonl

# The model beside the measurement for every spec of the sweep: live on a GPU
# machine, else from the recorded reference.
compare:
	go build -o $(ROOT)/build/coalesce ./cmd/coalesce
	$(ROOT)/build/coalesce compare cuda/reference/sweep.jsonl
