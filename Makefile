# accelops.lifecycle: the commands of the README (`make quickstart`, `make demo`, `make test`, `make dist`) and their
# set-up.
# Works from a fresh clone on a fresh Debian machine as root: Debian packages, virtualenv, Python packages.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
DEBS := fuse3 libfuse3-3 pciutils pci.ids shellcheck git libvirt-clients libxml2-utils chromium openssh-client rabbitmq-server openjdk-17-jre-headless
PYTHON ?= $(shell tools/find-python.sh)

.PHONY: all quickstart demo test dist setup deps venv venv-oldest venv-modules services-venv sanity-venvs stage clean
all: test

## Debian packages (skipped when all are present; needs root when something is missing).
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@# the simulator's FUSE mounts need /dev/fuse; a machine that has not loaded the module yet has none
	@[ -e /dev/fuse ] || modprobe fuse 2>/dev/null || echo "warning: /dev/fuse is missing and modprobe fuse failed"

## The virtualenv with pinned Python packages (rebuilt when the requirement files change).
$(VENV)/.stamp: requirements.txt requirements-dev.txt tests/constraints.txt
	@test -n "$(PYTHON)" || { echo "no Python >= 3.11 found (looked for 3.13, 3.12, 3.11)"; exit 1; }
	@echo "creating $(VENV) with $(PYTHON)"
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt -c tests/constraints.txt
	touch $@
venv: $(VENV)/.stamp

## The oldest ansible-core that meta/runtime.yml admits, in a virtualenv of its own (gate "oldest"): it runs on a
## controller Python 3.10 to 3.12.
OLDEST_VENV := .venv-oldest
OLDEST_PYTHON ?= $(shell tools/find-python.sh 3.12 3.11 3.10)
$(OLDEST_VENV)/.stamp: requirements.txt tests/requirements-oldest.txt tests/constraints-oldest.txt
	@test -n "$(OLDEST_PYTHON)" || { echo "no Python 3.10 to 3.12 found for ansible-core 2.17 (looked for 3.12, 3.11, 3.10)"; exit 1; }
	@echo "creating $(OLDEST_VENV) with $(OLDEST_PYTHON)"
	rm -rf $(OLDEST_VENV)
	$(OLDEST_PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install -q --disable-pip-version-check -r tests/requirements-oldest.txt -c tests/constraints-oldest.txt
	touch $@
venv-oldest: $(OLDEST_VENV)/.stamp

## The modules' own virtualenv: the Python the integration targets run the modules on (the target side of
## ansible-test), built on the platform's Python 3 as a real host's module runs are; the collection's own
## requirements only (openstacksdk for the modules that talk to the services). docs/development.md, "Interpreters".
MODULES_VENV := .venv-modules
MODULES_PYTHON ?= $(shell tools/find-module-python.sh)
$(MODULES_VENV)/.stamp: requirements.txt tests/constraints.txt
	@test -n "$(MODULES_PYTHON)" || { echo "no Python >= 3.9 found for the modules"; exit 1; }
	@echo "creating $(MODULES_VENV) with $(MODULES_PYTHON)"
	rm -rf $(MODULES_VENV)
	$(MODULES_PYTHON) -m venv $(MODULES_VENV)
	$(MODULES_VENV)/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c tests/constraints.txt
	touch $@
venv-modules: $(MODULES_VENV)/.stamp

## The services' own virtualenv (real Placement and friends for the integration tests), kept apart from the
## controller's so their pins cannot clash with ansible-core's.
services-venv:
	@if [ -x tests/harness/setup-venv.sh ]; then tests/harness/setup-venv.sh; fi

## The virtualenvs of ansible-test's sanity tests (kept in ~/.ansible/test/venv): built with the rest of the set-up,
## so that the gates of a new home directory do not spend their time building them.
sanity-venvs: venv
	@mkdir -p .build && tools/gates.sh --prime-sanity-venvs >.build/sanity-venvs.log 2>&1 || { tail -20 .build/sanity-venvs.log; exit 1; }

setup: deps venv venv-oldest venv-modules services-venv sanity-venvs

## Stage the collection where ansible-playbook, ansible-doc and ansible-test find it.
stage:
	@tools/stage.sh >/dev/null

## The quick start: Placement on 127.0.0.1, a simulated host converged (0 -> 4 VFs, rerun changed=0), plan.yml
## without drift and the fleet page in .build/quickstart/accelerator-report.html; stops what it started.
quickstart: deps venv services-venv
	rm -rf .build/quickstart
	tests/demo/quickstart.sh .build/quickstart

## The main job on its embedded default: discovery on this machine and on a simulated lab host.
demo: setup stage
	tools/demo.sh

## Every test: sanity, lint, changelog and docs lint, unit, simulator and integration tests.
test: setup
	tools/gates.sh

## The Galaxy tarball in dist/: built from a staged copy whose changelog fragments are folded into CHANGELOG.rst
## (antsibull-changelog release at galaxy.yml's version; the checkout is left as it is).
dist: venv
	@set -e; stage=$$(tools/stage.sh .build/dist-stage); \
	  version=$$(sed -n 's/^version: *//p' galaxy.yml); \
	  (cd "$$stage" && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" ANSIBLE_COLLECTIONS_PATH="$(CURDIR)/.build/dist-stage" \
	    antsibull-changelog release --version "$$version" --date "$$(date -u +%F)"); \
	  mkdir -p dist; $(CURDIR)/$(VENV)/bin/ansible-galaxy collection build "$$stage" --output-path dist --force

clean:
	rm -rf .build $(VENV) $(OLDEST_VENV) $(MODULES_VENV) .venv-services .venv-cyborg .venv-ironic .venv-nova tests/output
