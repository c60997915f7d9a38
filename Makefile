# Coalescing course: notebook environment and test entry points.
#
#   make setup           venv + gonb/goimports/gopls + GoNB kernel (scripts/install.sh; fast when done)
#   make lab             JupyterLab on notebooks/index.ipynb, http://127.0.0.1:8888 (PORT=, HOST=, LAB_ARGS=)
#   make test            every test suite (the prerequisites of `test`); CI runs it via .ci/run
#   make test-go         go vet + go test
#   make test-notebooks  clean-notebook check + headless execution of notebooks/*.ipynb
#                        (NOTEBOOKS="notebooks/a.ipynb ..." to pick, NOTEBOOK_TIMEOUT=s per cell)
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

.PHONY: help setup lab test test-go test-notebooks check-notebooks clean distclean

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
test: test-go test-notebooks

test-go:
	go vet ./...
	go test $(GO_TEST_FLAGS) ./...

check-notebooks:
	@$(PYTHON) scripts/check_clean_notebooks.py

test-notebooks: setup check-notebooks
	@$(VPY) scripts/run_notebooks.py $(NOTEBOOKS)

clean:
	rm -rf $(ROOT)/build

distclean: clean
	rm -rf $(ROOT)/.venv $(ROOT)/.cache
