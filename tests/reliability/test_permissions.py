# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An identity without the admin role against the real Cyborg and Placement (docs/reliability.md,
"Permissions").

- Cyborg: the harness's token middleware (tests/harness/svc_cyborg.py) maps the token ``member`` to the
  roles member and reader of another project, as keystonemiddleware would; Cyborg's default policy lets only
  admins create and delete device profiles. An unknown token is answered 401.
- Placement: the harness runs it with ``auth_strategy = noauth2``; a token other than ``admin`` becomes a
  user of that name with no role at all, and Placement's default policy answers 403 to every request.
- Ironic: the harness runs it standalone with ``auth_strategy = noauth`` (every request is an admin's), so
  a non-admin identity cannot be tested against it; the 401/403 messages of its client are checked in
  tests/unit/plugins/module_utils/test_ironic.py.

Each run must fail with a message that says it is a permission (403) or authentication (401) problem, names
the service and the operation and suggests the admin role; never a traceback; nothing written.
"""

from __future__ import annotations

import os

import pytest

from helpers import discovery, fpga_record, patch_exits, run_module
from svcfaults_helpers import record
from svcfaults_helpers import cyborg, service_state  # noqa: F401  pylint: disable=unused-import

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C
from ansible_collections.accelops.lifecycle.plugins.modules import device_profile as dp_mod
from ansible_collections.accelops.lifecycle.plugins.modules import device_profile_info as dpi_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_info as ppi_mod
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as ppt_mod

GROUPS = [{"family": "fpga", "vendor": "intel", "function": "gzip"}]
OTHER = [{"family": "fpga", "vendor": "intel", "function": "gzip", "count": 2}]


def permission_failure(out, service, operation, status=403):
    m = out.msg
    said, todo = ("permission denied", "admin role") if status == 403 else ("authentication failed", "check auth")
    return (out.kind == "fail" and "Traceback" not in m and service in m and operation in m
            and "HTTP %d" % status in m and said in m and todo in m)


@pytest.fixture
def exits(monkeypatch):
    patch_exits(monkeypatch)


def test_cyborg_member_cannot_write_and_is_told_why(cyborg, exits, figures):  # noqa: F811
    """create, replace and delete as a member: 403 named as a permission problem, the operation and the admin
    role in the message; the admin's profile untouched (same uuid and groups), no profile created."""
    member = cyborg.cloud(token="member")
    existing = cyborg.create("perm-existing", C.normalize_groups(GROUPS))
    total = len(cyborg.profiles())
    cases = {
        "create": ({"name": "perm-new", "groups": GROUPS}, "create device profile perm-new"),
        "replace": ({"name": "perm-existing", "groups": OTHER, "replace": True}, "delete device profile perm-existing"),
        "delete": ({"name": "perm-existing", "state": "absent"}, "delete device profile perm-existing"),
    }
    for what, (args, operation) in sorted(cases.items()):
        out = run_module(dp_mod.main, dict(args, cloud=member))
        assert permission_failure(out, "Cyborg", operation), "%s: %r" % (what, out)
        assert "cyborg:device_profile:" in out.msg, out.msg
    # nothing written
    assert cyborg.by_name("perm-new") == []
    (now,) = cyborg.by_name("perm-existing")
    assert now["uuid"] == existing["uuid"] and C.canonical(now)["groups"] == C.normalize_groups(GROUPS)
    assert len(cyborg.profiles()) == total
    # reading is allowed to a member (Cyborg's policy: reader), so device_profile_info works
    out = run_module(dpi_mod.main, {"cloud": member, "names": ["perm-existing"]})
    assert out.kind == "exit" and [p["name"] for p in out.result["profiles"]] == ["perm-existing"], out
    record(figures, "permissions", cyborg_member_refused_clearly=len(cases), cyborg_member_writes=0)


def test_cyborg_unknown_token_is_an_authentication_failure(cyborg, exits, figures):  # noqa: F811
    bogus = cyborg.cloud(token="not-a-token")
    out = run_module(dp_mod.main, {"cloud": bogus, "name": "perm-bogus", "groups": GROUPS})
    assert permission_failure(out, "Cyborg", "read device profile perm-bogus", status=401), out
    out = run_module(dpi_mod.main, {"cloud": bogus})
    assert permission_failure(out, "Cyborg", "list device profiles", status=401), out
    assert cyborg.by_name("perm-bogus") == []
    record(figures, "permissions", cyborg_unknown_token_refused_clearly=2)


def test_placement_without_admin_role_is_refused_clearly(placement, exits, tmp_path, figures):
    """noauth2 gives the token ``member`` no role: Placement answers 403 to the first request. The module
    fails naming Placement, the request and that it needs an admin; nothing is written."""
    before = len(placement.providers())
    member = placement.cloud(token="member")
    out = run_module(ppt_mod.main, {"cloud": member, "discovery": discovery("perm-host", [fpga_record()]),
                                    "generation_cache": os.path.join(str(tmp_path), "gen.json"),
                                    "request_retry_delay": 0.05})
    m = out.msg
    assert out.kind == "fail" and "Traceback" not in m, out
    assert "Placement" in m and "HTTP 403" in m and "GET /resource_providers" in m and "admin" in m, m
    assert "not allowed" in m or "permission" in m, m
    out = run_module(ppi_mod.main, {"cloud": member, "hosts": ["perm-host"], "request_retry_delay": 0.05})
    m = out.msg
    assert out.kind == "fail" and "Placement" in m and "HTTP 403" in m and "admin" in m, out
    assert len(placement.providers()) == before
    record(figures, "permissions", placement_member_refused_clearly=2, placement_member_writes=0)
