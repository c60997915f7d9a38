# Coalescing course: notebook environment and test entry points.
#
#   make setup           venv + gonb/goimports/gopls + GoNB kernel (scripts/install.sh; fast when done)
#   make lab             JupyterLab on notebooks/index.ipynb, http://127.0.0.1:8888 (PORT=, HOST=, LAB_ARGS=)
#   make test            every test suite: go, then notebooks beside install and hub, then browser
#                        where install did not run it; CI runs it via .ci/run
#   make test-go         go vet + go test
#   make test-times      go test's ten slowest tests, its packages, its wall and CPU time against the
#                        goal of 60 s on a quiet 2-core machine (scripts/test_times.py; never a failure)
#   make test-notebooks  clean-notebook check + headless execution of notebooks/*.ipynb
#                        (and scripts/testdata: a notebook with no setup cell, hostile lab.Try kernels)
#                        (NOTEBOOKS="notebooks/a.ipynb ..." to pick, NOTEBOOK_TIMEOUT=s per cell);
#                        also fails a markdown number no cell writes or prints, and measured
#                        specs that differ from lab/testdata/notebook-specs.jsonl. Times are
#                        reported against the goal (NOTEBOOK_GOAL, 120 s), never judged; only
#                        a hang fails (NOTEBOOK_HANG_GUARD, 1200 s). The executed copies and
#                        build/notebooks/run.json stay for checks that read the run
#   make test-gpu        every notebook live on this machine's GPU (nvidia-smi, nvcc, ncu), strictly:
#                        COALESCE_MEASURE=strict fails a cell that would fall back on the recording;
#                        log in build/gpu/test-gpu.log (scripts/test_gpu.sh says what it holds)
#   make gpu-bundle      .gpubundle/: Go, modules, gonb and wheels for a GPU machine without Go or
#                        network; there, scripts/gpu_unpack.sh installs them and runs make test-gpu
#   make notebook-specs  rewrite lab/testdata/notebook-specs.jsonl from a run of every notebook
#   make predictions     rewrite the model's predictions the tests read (testdata/predictions.jsonl,
#                        calibrate/testdata/predictions.jsonl) after a change to the model's source:
#                        until then the tests predict every launch again, slower and as right
#                        (lessons/sectors/sectorstest; COALESCE_PREDICTIONS=off trusts no file)
#   make test-install    install.sh into a temporary system-wide-like prefix, as the Dockerfile runs it; then,
#                        as root, the image's learner (uid 1000): a notebook and the browser test against it
#                        (as root it installs what the browser test needs, and fails without it)
#   make test-hub        a class on a real JupyterHub (local Unix learners, as root; the proxy from npm):
#                        log in, run a lesson, restart, update, collect, grade (deploy's TestJupyterHub)
#   make notebook-history  rewrite notebooks/.shipped.sha256 from git (the lesson versions course_home.sh updates)
#   make test-image      the image built with podman from the Dockerfile on a local Ubuntu 24.04 base (no
#                        CUDA) and run as the learner: health check, browser test, every notebook and the
#                        grade line inside it; log in build/image/test-image.log (root; not in make test)
#   make test-browser    JupyterLab in headless Chromium: index + first lesson, run all, check, screenshots
#                        in build/browser/ (BROWSER_NOTEBOOKS="..." to pick; installs chromium as root).
#                        `make test` runs it only where test-install cannot run it as the learner
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

# Jupyter looks for the GoNB kernelspec where install.sh put it, not in $HOME,
# and for its config (gonb the default kernel) beside it.
export JUPYTER_PATH := $(KERNEL_PREFIX)/share/jupyter
export JUPYTER_CONFIG_PATH := $(KERNEL_PREFIX)/etc/jupyter
export JUPYTER_PLATFORM_DIRS := 1
export PATH := $(BIN_DIR):$(PATH)

# Deterministic Go builds and tests: never edit go.mod/go.sum implicitly, no VCS
# stamping (results must not depend on the git state), no test result caching.
export GOFLAGS := -mod=readonly -buildvcs=false
# -timeout is a hang guard: a package takes under a minute on a quiet
# 2-core machine, but on a busy one calibrate took 9.6 minutes (a load of
# about 20) and failed past the old 10m at a load of 25 (issue 22).
GO_TEST_FLAGS ?= -count=1 -timeout=30m

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

.PHONY: help setup lab test test-go test-notebooks test-gpu gpu-bundle notebook-specs check-notebooks test-install test-image test-browser test-hub hub-proxy notebook-history \
	test-browser-unless-learner test-install-then-hub test-setup test-times predictions \
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
	  $(ALLOW_ROOT) $(LAB_ARGS) $(LAB_NOTEBOOK)

# Every suite runs in `test`; add new ones (browser, grader, ...) here. Go
# first, on both cores, beside the setup the rest needs (pip, npm and the
# tools' builds wait on the disk as much as they compute, and no Go test
# reads what they install); then the notebooks headless beside the install and
# hub tests (one after the other: both run learners as other users), each
# side's output printed whole when it ends: those two wait on JupyterLab,
# JupyterHub, a browser and one cell at a time more than they compute. As
# root, test-install runs the browser test as the image's learner; the same
# notebooks in the same browser as root would only repeat it, so the
# browser test runs on its own only where that one did not.
IS_ROOT := $(filter 0,$(shell id -u))
test:
	@echo "make test: test-go beside test-setup (each prints when it ends)"
	@$(MAKE) -j2 --output-sync=target test-go test-setup
	@echo "make test: test-notebooks beside test-install and test-hub (each side prints when it ends)"
	@$(MAKE) -j2 --output-sync=target test-notebooks test-install-then-hub
	@$(MAKE) test-browser-unless-learner

# What the suites after test-go need installed.
test-setup:
	@$(MAKE) setup check-notebooks hub-proxy $(if $(IS_ROOT),chromium test-requirements)

test-install-then-hub:
	@$(MAKE) test-install
	@$(MAKE) test-hub

# go test's own vet pass would repeat a subset of the go vet just run.
test-go:
	go vet ./...
	go test $(GO_TEST_FLAGS) -vet=off ./...

test-times:
	@$(PYTHON) scripts/test_times.py

predictions:
	COALESCE_PREDICTIONS=update go test -count=1 -run '^(TestPublishedAccuracy|TestH200TimeFromData)$$' . ./calibrate

check-notebooks:
	@$(PYTHON) scripts/check_clean_notebooks.py

# Without NOTEBOOKS, also a notebook with no setup cell (the kernel's go.work), and
# hostile learner kernels through lab.Try (each stopped within its limits, with
# its message), in the same run.
test-notebooks: setup check-notebooks
	@$(VPY) scripts/run_notebooks.py $(or $(NOTEBOOKS),$(sort $(wildcard notebooks/*.ipynb)) scripts/testdata/no-setup.ipynb scripts/testdata/hostile-try.ipynb)

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

# The Dockerfile's install step, tested: deploy's TestInstallIntoPrefix, and
# as root TestNonRootLearner, whose browser test must then run. The log
# says whether it did (test-browser-unless-learner reads it).
INSTALL_LOG := $(ROOT)/build/test-install.log
test-install: setup $(if $(IS_ROOT),chromium test-requirements)
	@mkdir -p $(dir $(INSTALL_LOG)) && rm -f $(INSTALL_LOG)
	COALESCE_INSTALL_TEST=1 $(if $(IS_ROOT),BROWSER_TEST_REQUIRED=1) go test $(GO_TEST_FLAGS) -v -run '^(TestInstallIntoPrefix|TestNonRootLearner)$$' ./deploy | tee $(INSTALL_LOG)

# After test-install (`test` runs them in turn), whose log it reads.
test-browser-unless-learner:
	@if grep -qs -- '--- PASS: TestNonRootLearner/browser' $(INSTALL_LOG); then \
	  echo "make: the browser test ran as the image's learner in test-install; not again as $$(id -un)"; \
	else $(MAKE) test-browser; fi

# The JupyterHub class: configurable-http-proxy from npm at deploy/testdata/hub's
# lock, into .cache/hub-proxy (once per lock); without npm the test says it
# skipped (under CI=true it fails).
HUB_PROXY_DIR := $(ROOT)/.cache/hub-proxy
export HUB_PROXY := $(HUB_PROXY_DIR)/node_modules/.bin/configurable-http-proxy
test-hub: setup hub-proxy
	COALESCE_HUB_TEST=1 go test $(GO_TEST_FLAGS) -run '^TestJupyterHub$$' -v ./deploy

hub-proxy:
	@lock="$(ROOT)/deploy/testdata/hub/package-lock.json"; \
	want="$$(cat "$(ROOT)/deploy/testdata/hub/package.json" "$$lock" | sha256sum | cut -d' ' -f1)"; \
	if [ -x "$(HUB_PROXY)" ] && [ "$$(cat $(HUB_PROXY_DIR)/.stamp 2>/dev/null)" = "$$want" ]; then exit 0; fi; \
	if ! command -v npm >/dev/null; then echo "make: npm not found: the JupyterHub test will skip (apt-get install npm)" >&2; exit 0; fi; \
	echo "make: installing configurable-http-proxy (npm ci) into $(HUB_PROXY_DIR)"; \
	rm -rf "$(HUB_PROXY_DIR)"; mkdir -p "$(HUB_PROXY_DIR)"; \
	cp "$(ROOT)/deploy/testdata/hub/package.json" "$$lock" "$(HUB_PROXY_DIR)/"; \
	npm ci --prefix "$(HUB_PROXY_DIR)" --no-audit --no-fund --loglevel=error >/dev/null; \
	"$(HUB_PROXY)" --version; echo "$$want" > "$(HUB_PROXY_DIR)/.stamp"

notebook-history:
	@$(PYTHON) scripts/course_notebooks.py history --out notebooks/.shipped.sha256

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
