"""pytest configuration of the simulator's own tests: import path, the ``fuse`` marker and fixtures."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from accelsim.fuse import fuse_unavailable_reason, mount  # noqa: E402  pylint: disable=wrong-import-position
from accelsim.render import render_tree  # noqa: E402  pylint: disable=wrong-import-position


def pytest_configure(config):
    config.addinivalue_line("markers", "fuse: needs a FUSE mount (root and /dev/fuse); fails instead of skipping when $CI is set")


def require_fuse():
    why = fuse_unavailable_reason()
    if why:
        if os.environ.get("CI"):
            pytest.fail("FUSE is required in CI: %s" % why)
        pytest.skip("FUSE unavailable: %s" % why)


@pytest.fixture
def tree(tmp_path):
    """Factory: render a lab as a plain tree; returns the TreeHost."""
    def make(lab="lab-all"):
        return render_tree(lab, str(tmp_path / ("tree-" + os.path.basename(str(lab)))))
    return make


@pytest.fixture
def fusehost(tmp_path):
    """Factory: mount a lab with FUSE; unmounted at teardown."""
    require_fuse()
    hosts = []

    def make(lab="lab-all"):
        mp = tmp_path / ("mnt-%d" % len(hosts))
        mp.mkdir()
        h = mount(lab, str(mp))
        hosts.append(h)
        return h
    yield make
    for h in hosts:
        h.unmount()
