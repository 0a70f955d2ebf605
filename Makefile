# The course's commands; `make help` lists them. Only make and a Python 3.11-3.13 are needed; everything else goes in
# .venv (and for `make replica P=colab|kaggle|colab-tpu`, the platform's Python and .venv-P).
# tools/find-python finds a supported Python on PATH or under pyenv (it says how to get one otherwise);
# `make PYTHON=/path/to/python` overrides it.
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell tools/find-python 2>/dev/null)
endif
# A recipe's first line where PYTHON is used: without one, find-python's message says what to install.
NEEDS_PYTHON = test -n "$(PYTHON)" || tools/find-python >/dev/null
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
BROWSER_STAMP := $(VENV)/.browser-installed
# Fast mode and two logical CPU devices standing in for two accelerators, as in CI.
TEST_ENV := COURSE_FAST=1 COURSE_DEVICES=2 COURSE_WIDGETS=0
# coverage.py's faster sys.monitoring core where Python has it (3.12+); figures in docs/ci.md.
COVERAGE_ENV = COVERAGE_CORE=$$($(BIN)/python -c 'import sys; print("sysmon" if sys.version_info >= (3, 12) else "ctrace")')
FAST ?= 1
DEVICES ?= 2
JOBS ?= 2
# Test files at once in `make test-browser`.
BROWSER_JOBS ?= 2
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# Installs into .venv through uv where UV names its binary (.ci/run sets it; far faster from an empty cache), else pip.
UV ?=
PIP_INSTALL = $(if $(UV),$(UV) pip install -q --python $(BIN)/python,$(BIN)/python -m pip install -q \
	--disable-pip-version-check)

.PHONY: help setup test unit notebook lint run replica lab export template outputs data clean tensorboard screenshots \
	browser chromium test-browser site test-site release student

help:  ## this list
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  make %-21s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

setup: $(STAMP)  ## create .venv: the course with TensorFlow (CPU build) and the test tools; idempotent

# Bytecode at first import, not all at install; where PYTHONDONTWRITEBYTECODE forbids that, compileall on every core.
$(STAMP): pyproject.toml
	@$(NEEDS_PYTHON)
	@$(PYTHON) -c 'import sys; v = sys.version_info[:2]; sys.exit(0 if (3, 11) <= v <= (3, 13) else "Python 3.11-3.13 is needed, found %d.%d at $(PYTHON): run make without PYTHON, or see tools/find-python" % v)'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) $(if $(UV),,--no-compile) -e ".[cpu,dev,profile]" 2>&1 | grep -v "^WARNING: Location" || true
	$(if $(PYTHONDONTWRITEBYTECODE),$(BIN)/python -m compileall -qq -j0 $(VENV)/lib || true)
	$(BIN)/python -c "import helpers, tensorflow, nbval"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

lint: setup  ## ruff, the notebook formatter's check, the package's layering (lint-imports), actionlint
	$(BIN)/ruff check helpers tests tools notebooks
	$(BIN)/python -m tools.notebook_format --check
	$(BIN)/lint-imports --no-cache
	$(BIN)/actionlint

# Chapter 7's workers (TensorFlow's gRPC servers) listen on every interface: tests run in a private network namespace
# with only a loopback interface where Linux allows one (tools/sandbox.py), as they are elsewhere.
test: setup lint  ## lint, unit tests with coverage, every notebook under nbval (fast mode, 2 logical devices)
	$(TEST_ENV) $(COVERAGE_ENV) $(BIN)/python -m tools.sandbox $(BIN)/python -m pytest -n 2 --dist loadfile \
		--cov=helpers --cov-report=term-missing:skip-covered --cov-fail-under=90 \
		--nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=300 \
		--ignore=tests/browser tests notebooks

unit: setup  ## only the unit tests, with coverage
	$(TEST_ENV) $(COVERAGE_ENV) $(BIN)/python -m pytest -n 2 --dist loadfile --cov=helpers --cov-report=term-missing \
		--ignore=tests/browser tests

# One notebook under nbval, e.g. `make notebook NB=notebooks/01_single_gpu.ipynb DEVICES=1`.
notebook: setup  ## one notebook under nbval: make notebook NB=notebooks/01_single_gpu.ipynb DEVICES=1
	COURSE_FAST=$(FAST) COURSE_DEVICES=$(DEVICES) COURSE_WIDGETS=0 $(BIN)/python -m tools.sandbox $(BIN)/python -m pytest \
		--nbval --nbval-sanitize-with tests/nbval_sanitize.cfg --nbval-cell-timeout=300 $(NB)

run: setup  ## execute every notebook into build/ (HTML pages, build/report.md); FAST=0 for full size
	COURSE_FAST=$(FAST) COURSE_DEVICES=$(DEVICES) COURSE_WIDGETS=0 $(BIN)/python -m tools.run_notebooks

# A platform's runtime replicated in .venv-P from tools/platforms/P.txt (tools/replica.py): Colab's (Python 3.13),
# Kaggle's GPU image (Python 3.12) or Colab's TPU runtime (JAX, no TensorFlow, 8 host devices). The course is installed
# as the setup cell does, failing if that changes a preinstalled package, then every notebook runs (fast mode), JOBS
# at once; on the TPU runtime every chapter that needs TensorFlow must stop at its setup cell in one line.
# ENVIRONMENT=1 only builds the venv (mostly downloads; reused while P.txt is unchanged).
replica:  ## every notebook in a replica of P=colab|kaggle|colab-tpu; ENVIRONMENT=1: only its venv
	@test -n "$(P)" || { echo "make replica: say which platform: P=colab, P=kaggle or P=colab-tpu"; exit 2; }
	@$(NEEDS_PYTHON)
	$(PYTHON) -m tools.replica --platform $(P) $(if $(ENVIRONMENT),--environment-only,--jobs $(JOBS))

lab: setup  ## JupyterLab on notebooks/
	$(PIP_INSTALL) -e ".[lab]" 2>&1 | grep -v "^WARNING: Location" || true
	$(BIN)/jupyter lab notebooks

# Chapter 8's profiles in TensorBoard (its Profile tab is XProf, from the `profile` extra).
tensorboard: setup  ## TensorBoard on chapter 8's profiles at http://127.0.0.1:6006
	$(BIN)/tensorboard --logdir notebooks/ch8_logs --host 127.0.0.1 --port 6006

# Debian's chromium (apt-get, with sudo unless root) and the `browser` extra (Playwright, JupyterLab) in .venv; the
# extra is installed again only when pyproject.toml changes (pip rebuilds the editable course at every install).
browser: chromium $(BROWSER_STAMP)  ## install Debian's chromium and the browser extra (Playwright, JupyterLab)

# .ci/run starts it in the background, beside the other steps.
chromium:  ## install Debian's chromium with apt-get, unless there is one
	@command -v chromium >/dev/null || { echo "Installing Debian's chromium with apt-get"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; }

$(BROWSER_STAMP): $(STAMP) pyproject.toml
	$(PIP_INSTALL) -e ".[browser]" 2>&1 | grep -v "^WARNING: Location" || true
	$(BIN)/python -c "import playwright, jupyterlab"
	touch $(BROWSER_STAMP)

# The notebooks in JupyterLab in headless Chromium, run from the Run menu and checked for what a learner sees (fast
# mode, 2 logical devices); full-page screenshots in build/screenshots/. NB="notebooks/01_single_gpu.ipynb ..." picks.
# The site is checked too (tests/browser/test_site.py), beside JupyterLab: one file per process, each with its own
# Chromium and servers on free ports.
test-browser: browser site  ## every notebook run in JupyterLab in headless Chromium, checked as a learner sees it (NB=...)
	NB="$(NB)" $(BIN)/python -m pytest -n $(BROWSER_JOBS) --dist loadfile -v tests/browser

# The self-study site in build/site/ (open build/site/index.html): the stored notebooks as they are, never executed,
# the glossary and the instructor's page (docs/). Warnings are errors, so a broken link between pages fails the build;
# it runs in a private network where Linux allows one, proving that it needs none.
# Rebuilt only when a page's source changed.
site: build/site/index.html  ## the course as a website in build/site/ (offline)

build/site/index.html: $(STAMP) pyproject.toml GLOSSARY.md \
		$(filter-out %/__pycache__,$(wildcard notebooks/*.ipynb notebooks/images/* docs/*))
	$(PIP_INSTALL) -e ".[site]" 2>&1 | grep -v "^WARNING: Location" || true
	rm -rf build/site
	$(BIN)/python -m tools.sandbox $(BIN)/python -m sphinx -W --keep-going -q -c docs . build/site

# The site in headless Chromium, served on 127.0.0.1: every page renders, every link within the site answers, every
# picture shows; full-page screenshots in build/site-screenshots/.
test-site: site browser  ## every page of the site checked in headless Chromium
	$(BIN)/python -m pytest -p no:xdist -q tests/browser/test_site.py

# The stored screenshots of TensorBoard's Profile tab (notebooks/images/): chapter 8 run in the browser writes its
# trace, and the browser check photographs the Profile tab on it.
screenshots: browser  ## refresh the stored TensorBoard screenshots chapter 8 shows
	$(MAKE) test-browser NB=notebooks/08_profiling.ipynb
	cp build/screenshots/tensorboard_profile_*.png notebooks/images/

# The notebooks are the source of the code they teach: write their exported cells into helpers/chapters and
# helpers/programs (tests/tools/test_export.py fails while a generated file is stale).
export: setup  ## write the notebooks' exported cells into helpers/chapters and helpers/programs
	$(BIN)/python -m tools.export

# Badges (at the release tag) and setup cells (installing the release) follow the version: `make release` runs it.
template: setup  ## rewrite badges, setup cells and metadata from pyproject's Repository and the version
	$(BIN)/python -m tools.template --fix

# Re-execute notebooks in place (fast mode, CI's devices) so the stored outputs are current; one that an error stops
# keeps its stored outputs. NB="notebooks/01_single_gpu.ipynb ..." picks.
outputs: setup  ## refresh the stored outputs: every notebook (or NB=...) executed in place, fast mode
	$(TEST_ENV) $(BIN)/python -m tools.run_notebooks --in-place $(NB)

# The generated image folder of chapter 6 (data/shapes, about 2 s; git-ignored).
data: setup  ## write chapter 6's generated image folder, data/shapes/
	$(BIN)/python -m helpers.images

clean:  ## remove build/, coverage data and the replicas' venvs
	rm -rf build .coverage .venv-colab .venv-kaggle .venv-colab-tpu

# One commit that sets the version (helpers/__init__.py, CITATION.cff), moves CHANGELOG's unreleased entries under it
# and points every badge and setup cell at it; the maintainer then tags vX.Y.Z and pushes (publish.yml uploads it).
release: setup  ## the release commit for VERSION=X.Y.Z (tagging and pushing stay the maintainer's)
	@test -n "$(VERSION)" || { echo "make release: say which version, e.g. make release VERSION=0.2.0"; exit 2; }
	$(BIN)/python -m tools.release $(VERSION)

student: setup  ## a copy of the notebooks without the folded solutions, in build/student/notebooks/ (for classes)
	$(BIN)/python -m tools.student
