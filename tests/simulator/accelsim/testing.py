"""pytest helpers shared by the simulator's own tests and the collection's module tests: one FUSE-availability
check and one mount factory (so the policy "skip where FUSE cannot work, fail in CI" lives in one place)."""

import contextlib
import os

from .fuse import fuse_unavailable_reason, mount


def require_fuse():
    """Skip the calling test when FUSE mounts cannot work here, or fail it when ``$CI`` is set."""
    import pytest  # pylint: disable=import-outside-toplevel  # test-only helper: accelsim itself does not need pytest
    why = fuse_unavailable_reason()
    if why:
        if os.environ.get("CI"):
            pytest.fail("FUSE is required in CI: %s" % why)
        pytest.skip("FUSE unavailable: %s" % why)


@contextlib.contextmanager
def mounts(base):
    """``with mounts(tmp_path) as make: h = make("lab-all")``: FUSE mounts under ``base`` (mnt-0, mnt-1, ...),
    every one unmounted at the end. Calls :func:`require_fuse` first."""
    require_fuse()
    hosts = []

    def make(lab="lab-all", **kwargs):
        mp = os.path.join(str(base), "mnt-%d" % len(hosts))
        os.mkdir(mp)
        h = mount(lab, mp, **kwargs)
        hosts.append(h)
        return h
    try:
        yield make
    finally:
        for h in hosts:
            h.unmount()
