# accelops.lifecycle: the two commands of the README (`make demo`, `make test`) and their set-up.
# Works from a fresh clone on a fresh Debian machine as root: Debian packages, virtualenv, Python packages.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
DEBS := fuse3 libfuse3-3 pciutils pci.ids shellcheck git libvirt-clients libxml2-utils chromium openssh-client rabbitmq-server openjdk-17-jre-headless
PYTHON ?= $(shell tools/find-python.sh)

.PHONY: all demo test setup deps venv services-venv stage clean
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

## The services' own virtualenv (real Placement and friends for the integration tests), kept apart from the
## controller's so their pins cannot clash with ansible-core's.
services-venv:
	@if [ -x tests/harness/setup-venv.sh ]; then tests/harness/setup-venv.sh; fi

setup: deps venv services-venv

## Stage the collection where ansible-playbook, ansible-doc and ansible-test find it.
stage:
	@tools/stage.sh >/dev/null

## The main job on its embedded default: discovery on this machine and on a simulated lab host.
demo: setup stage
	tools/demo.sh

## Every test: sanity, lint, changelog and docs lint, unit, simulator and integration tests.
test: setup
	tools/gates.sh

clean:
	rm -rf .build $(VENV) .venv-services .venv-cyborg .venv-ironic .venv-nova tests/output
