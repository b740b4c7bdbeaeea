# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Audit lines: each value encoded once (plain token, null or one JSON value) and read back unchanged."""

from __future__ import annotations

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _audit
from ansible_collections.accelops.lifecycle.plugins.module_utils._audit import Auditor, format_line, parse_line


@pytest.fixture(autouse=True)
def _no_syslog(monkeypatch):
    monkeypatch.setenv("ACCELOPS_AUDIT_SYSLOG", "0")


def test_structured_values_are_json_encoded_once():
    line = format_line("vgpu", "set types", "0000:3b:00.0", ["nvidia-231", "nvidia-232"], {"count": 4, "type": "GRID T4-2Q"})
    assert ' old=["nvidia-231","nvidia-232"] ' in line
    assert ' new={"count":4,"type":"GRID T4-2Q"} ' in line
    assert '\\"' not in line, "a value was JSON-quoted twice: %s" % line
    got = parse_line(line)
    assert got["old"] == ["nvidia-231", "nvidia-232"] and got["new"] == {"count": 4, "type": "GRID T4-2Q"}


@pytest.mark.parametrize("value,text", [
    ("8", "8"),
    ("0000:d8:00.0", "0000:d8:00.0"),
    ("vfio-pci", "vfio-pci"),
    ("GRID T4-2Q", '"GRID T4-2Q"'),
    ('say "hi"', '"say \\"hi\\""'),
    ("two\nlines", '"two\\nlines"'),
    ("", '""'),
    ("null", '"null"'),
    (None, "null"),
    (8, "8"),
    (True, "true"),
    ([], "[]"),
])
def test_each_value_form(value, text):
    line = format_line("sriov_vfs", "set", "dev", value, "x")
    assert " old=%s new=x " % text in line
    assert "\n" not in line


@pytest.mark.parametrize("old,new", [
    ("0", "8"),
    (None, "vfio-pci"),
    ("GRID T4-2Q", 'a "quoted" = value'),
    (["a b", "c"], {"k": ["v", None], "s": "x y"}),
    ("{not json}", "[1, 2]"),
])
def test_round_trip(old, new):
    line = format_line("fpga_program", "load bitstream", "0000:5e:00.0", old, new, root="/srv/lab one",
                       extra={"sha256": "ab" * 32, "note": "rolled back"})
    got = parse_line(line)
    assert got["module"] == "fpga_program" and got["action"] == "load bitstream" and got["device"] == "0000:5e:00.0"
    assert got["root"] == "/srv/lab one" and got["sha256"] == "ab" * 32 and got["note"] == "rolled back"
    want_old = old if not isinstance(old, (int, float)) else str(old)
    assert got["old"] == want_old and got["new"] == new
    assert got["uid"].isdigit() and got["user"]


def test_parse_rejects_other_lines():
    with pytest.raises(ValueError):
        parse_line("kernel: something else")


def test_auditor_collects_and_wraps(monkeypatch):
    sent = []
    monkeypatch.setattr(_audit, "write_syslog", sent.append)
    a = Auditor(None, "sriov_vfs")
    a.record("set sriov_numvfs", "0000:d8:00.0", old="0", new="8")
    step = a.wrap(lambda: "done", "bind", "0000:d8:02.0", old=None, new="vfio-pci")
    assert a.lines == sent and len(a.lines) == 1
    assert step() == "done" and len(a.lines) == 2
    assert parse_line(a.lines[1])["new"] == "vfio-pci" and parse_line(a.lines[1])["old"] is None


def test_syslog_off_by_environment():
    assert _audit.write_syslog("x") is False
