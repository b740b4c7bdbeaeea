"""pytest configuration of the simulator's own tests: import path, the ``fuse`` marker and fixtures."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

from accelsim.render import render_tree  # noqa: E402  pylint: disable=wrong-import-position
from accelsim.testing import mounts  # noqa: E402  pylint: disable=wrong-import-position


def pytest_configure(config):
    config.addinivalue_line("markers", "fuse: needs a FUSE mount (root and /dev/fuse); fails instead of skipping when $CI is set")


@pytest.fixture
def tree(tmp_path):
    """Factory: render a lab as a plain tree; returns the TreeHost."""
    def make(lab="lab-all"):
        return render_tree(lab, str(tmp_path / ("tree-" + os.path.basename(str(lab)))))
    return make


@pytest.fixture
def fusehost(tmp_path):
    """Factory: mount a lab with FUSE; unmounted at teardown (skips, or fails in CI, without FUSE)."""
    with mounts(tmp_path) as make:
        yield make
