# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The module base's checks of numbers and paths (issue 21, found by tests/reliability/test_hostile_input.py at
ten times the gate's scale): each value ends in a failure naming the option and the accepted form, never a
traceback. Each case ran into a traceback before the fix (noted per case)."""

from __future__ import annotations

import importlib
import os
import sys
import syslog
import time

import pytest

from ansible.module_utils import basic

from ansible_collections.accelops.lifecycle.plugins.module_utils import _module
from ansible_collections.accelops.lifecycle.plugins.module_utils._module import PATH_FORM, AccelopsModule
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modrunner import patch_exits, patch_module_args, run_module  # noqa: E402  pylint: disable=wrong-import-position

# every module of the collection, so that a new one is checked without being listed here
MODULES_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))), "plugins", "modules")
# (a controller action's module file holds its documentation only: the action plugin of the same name runs it)
ACTIONS_DIR = os.path.join(os.path.dirname(MODULES_DIR), "action")
ACTIONS = set(os.listdir(ACTIONS_DIR)) if os.path.isdir(ACTIONS_DIR) else set()
MODULES = tuple(sorted(n[:-3] for n in os.listdir(MODULES_DIR) if n.endswith(".py") and not n.startswith("_")
                       and n not in ACTIONS))
CLOUD = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": "t"}}


def main_of(name):
    return importlib.import_module("ansible_collections.accelops.lifecycle.plugins.modules." + name).main


@pytest.fixture
def logged(monkeypatch):
    """What would reach syslog; the real syslog.syslog refuses NULs and encodes the line as UTF-8."""
    lines = []

    def fake_syslog(priority, msg):
        if "\x00" in msg:
            raise ValueError("embedded null character")
        msg.encode("utf-8")
        lines.append(msg)
    monkeypatch.setattr(syslog, "syslog", fake_syslog)
    monkeypatch.setattr(syslog, "openlog", lambda *a, **k: None)
    monkeypatch.setattr(basic, "HAS_SYSLOG", True)
    monkeypatch.setattr(basic, "has_journal", False)
    return lines


def failed(out, option, form):
    assert out.kind == "fail", out.result
    msg = out.result["msg"]
    assert msg.startswith(option + ": must be "), msg
    assert form in msg, msg
    return msg


# -- the findings ------------------------------------------------------------------------------------------
def test_sriov_vfs_persist_root_with_a_nul_names_the_option(monkeypatch, tmp_path, writes):
    # was: ValueError: embedded null byte from _persist.Files.read while planning
    patch_exits(monkeypatch)
    out = run_module(main_of("sriov_vfs"), {"root": str(tmp_path), "address": "0000:d8:00.0", "num_vfs": 1,
                                            "persist_root": str(tmp_path) + "/x/\x00"})
    msg = failed(out, "persist_root", PATH_FORM)
    assert "NUL character" in msg
    assert writes == [] and os.listdir(str(tmp_path)) == []


def test_fpga_program_bitstream_with_a_nul_names_the_option(monkeypatch, tmp_path):
    # was: ValueError: lstat: embedded null character in path (os.path.realpath in _fpga.stage_bitstream)
    patch_exits(monkeypatch)
    out = run_module(main_of("fpga_program"), {"root": str(tmp_path), "address": "0000:5e:00.0", "sha256": "0" * 64,
                                               "bitstream": str(tmp_path) + "/\x00/.."})
    failed(out, "bitstream", PATH_FORM)


@pytest.mark.parametrize("option", ["root", "persist_root"])
def test_fpga_program_lone_surrogate_path_names_the_option(monkeypatch, tmp_path, logged, option):
    # was: UnicodeEncodeError ('surrogates not allowed') in ansible-core's _log_invocation
    patch_exits(monkeypatch)
    args = {"root": str(tmp_path), "address": "0000:5e:00.0", "bitstream": "/b.gbs", "sha256": "0" * 64}
    args[option] = "\udcff"
    msg = failed(run_module(main_of("fpga_program"), args), option, PATH_FORM)
    assert "not valid UTF-8" in msg
    assert any("\\udcff" in line for line in logged), logged


def test_surrogate_in_a_str_option_is_logged_escaped_and_kept(logged):
    with patch_module_args({"name": "a\udcffb\x00"}):
        module = AccelopsModule(argument_spec={"name": {"type": "str"}})
    assert module.params["name"] == "a\udcffb\x00"
    assert any("a\\udcffb\\x00" in line for line in logged), logged


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), "inf", "-Infinity", "1e99999999"])
def test_vgpu_tool_timeout_that_ansible_core_cannot_convert(monkeypatch, tmp_path, value):
    # was: OverflowError: cannot convert Infinity to integer, inside ansible-core's argument validation;
    # "1e99999999" made ansible-core build an int of 10**8 digits (minutes)
    patch_exits(monkeypatch)
    start = time.monotonic()
    out = run_module(main_of("vgpu"), {"root": str(tmp_path), "addresses": ["0000:3b:00.0"], "tool_timeout": value})
    msg = failed(out, "tool_timeout", "a whole number of seconds between 0 and 86400")
    assert time.monotonic() - start < 5
    assert repr(value) in msg


def test_device_profile_info_request_retries_minus_infinity(monkeypatch):
    # was: OverflowError in ansible-core's validation (YAML -.inf)
    patch_exits(monkeypatch)
    out = run_module(main_of("device_profile_info"), {"cloud": CLOUD, "request_retries": float("-inf")})
    failed(out, "request_retries", "a whole number between 0 and 20")


def test_suboption_infinity_names_the_element(monkeypatch, tmp_path):
    # the same OverflowError through a list of dicts with suboptions
    patch_exits(monkeypatch)
    out = run_module(main_of("sriov_vfs"), {"root": str(tmp_path), "address": "0000:d8:00.0", "num_vfs": 1,
                                            "vfs": [{"index": 0}, {"index": float("inf")}]})
    failed(out, "vfs[1].index", "a whole number between 0 and 65534")


# -- the shared rules --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value,why", [
    ("", "empty"), ("/a\x00b", "NUL"), ("/\udcff", "UTF-8"), ("/" + "a" * 256, "name of 256 bytes"),
    ("/" + "/".join(["a" * 200] * 21), "bytes long")])
def test_path_option_refusals(monkeypatch, value, why):
    patch_exits(monkeypatch)
    with patch_module_args({"p": value}):
        with pytest.raises(Exception) as e:
            AccelopsModule(argument_spec={"p": {"type": "path"}})
    msg = e.value.result["msg"]
    assert msg.startswith("p: must be " + PATH_FORM) and why in msg, msg


def test_secret_path_is_not_shown(monkeypatch):
    patch_exits(monkeypatch)
    with patch_module_args({"key": "/s3cret\x00"}):
        with pytest.raises(Exception) as e:
            AccelopsModule(argument_spec={"key": {"type": "str", "no_log": True}}, paths=("key",))
    assert e.value.result["msg"].startswith("key: must be a path") and "s3cret" not in e.value.result["msg"]


@pytest.mark.parametrize("kind,value,form", [
    ("int", True, "a whole number between 0 and 10"), ("int", 11, "between 0 and 10"), ("int", -1, "between 0 and 10"),
    ("int", 2 ** 4000, "a 4001-bit integer"), ("float", float("nan"), "a number between 0 and 10"),
    ("float", "inf", "a number between 0 and 10")])
def test_number_refusals(monkeypatch, kind, value, form):
    patch_exits(monkeypatch)
    with patch_module_args({"n": value}):
        with pytest.raises(Exception) as e:
            AccelopsModule(argument_spec={"n": {"type": kind}}, ranges={"n": (0, 10)})
    assert e.value.result["msg"].startswith("n: must be ") and form in e.value.result["msg"], e.value.result


def test_accepted_values_pass_unchanged():
    with patch_module_args({"n": "7", "f": 0.5, "p": "/srv/x.gbs"}):
        m = AccelopsModule(argument_spec={"n": {"type": "int"}, "f": {"type": "float"}, "p": {"type": "path"}},
                           ranges={"n": (0, 10), "f": (0, 1)})
    assert (m.params["n"], m.params["f"], m.params["p"]) == (7, 0.5, "/srv/x.gbs")


def test_persist_files_refuse_a_root_the_kernel_cannot_take(tmp_path):
    with pytest.raises(ValueError, match=r"^persist_root: must be a path.*NUL"):
        Files(Sysfs(root=str(tmp_path)), str(tmp_path) + "/\x00")


def test_every_module_is_listed():
    assert len(MODULES) >= 11 and "accelerator_info" in MODULES and "placement_provider_drain" in MODULES


@pytest.mark.parametrize("name", MODULES)
def test_every_numeric_option_has_a_declared_range(name, monkeypatch):
    """So every int and float option is checked the same way, with its accepted form in the message."""
    seen = {}

    class Captured(Exception):
        pass

    def capture(self, argument_spec, ranges=None, paths=(), **kwargs):
        seen.update(spec=argument_spec, ranges=ranges or {})
        raise Captured()
    monkeypatch.setattr(_module.AccelopsModule, "__init__", capture)
    with patch_module_args({}):
        with pytest.raises(Captured):
            main_of(name)()
    missing = []
    for option, entry in seen["spec"].items():
        if entry.get("type") in ("int", "float") and option not in seen["ranges"]:
            missing.append(option)
        for sub, sub_entry in (entry.get("options") or {}).items():
            if sub_entry.get("type") in ("int", "float") and "%s.%s" % (option, sub) not in seen["ranges"]:
                missing.append("%s.%s" % (option, sub))
    assert not missing, "%s: no range for %s" % (name, missing)


@pytest.mark.parametrize("value", ["garbage", "{{ 7*7 }}", ["garbage"], [{"index": 0}, 7]])
def test_list_of_dicts_element_that_is_not_a_dict_names_the_option(monkeypatch, tmp_path, value):
    # was: ansible-core's "dictionary requested, could not parse JSON or key=value" / "unable to evaluate string
    # as dictionary", naming no option (docs/reliability.md listed it as still open)
    patch_exits(monkeypatch)
    out = run_module(main_of("sriov_vfs"), {"root": str(tmp_path), "address": "0000:d8:00.0", "num_vfs": 1,
                                            "vfs": value})
    assert out.kind == "fail", out.result
    assert out.result["msg"].startswith("vfs["), out.result
    assert "must be a dictionary with the keys index, mac, trust, vlan" in out.result["msg"], out.result


def test_key_value_string_element_is_still_accepted_as_a_dict(monkeypatch, tmp_path):
    # ansible-core turns "index=0" into {"index": "0"}: not refused by the module base
    with patch_module_args({"vfs": ["index=0"]}):
        m = AccelopsModule(argument_spec={"vfs": {"type": "list", "elements": "dict",
                                                  "options": {"index": {"type": "int"}}}})
    assert m.params["vfs"] == [{"index": 0}]


@pytest.mark.parametrize("option", ["ca_cert", "client_cert", "client_key"])
def test_missing_tls_file_names_the_option(monkeypatch, tmp_path, option):
    # was: OSError "Could not find the TLS certificate file, invalid path" from requests at the first request
    patch_exits(monkeypatch)
    out = run_module(main_of("device_profile_info"), {"auth_type": "admin_token", "request_retries": 0,
                                                      "auth": {"endpoint": "http://127.0.0.1:9", "token": "t"},
                                                      option: str(tmp_path / "none.pem")})
    assert out.kind == "fail" and out.result["msg"].startswith(option + ": must be the path of a readable PEM file")


@pytest.mark.parametrize("token", ["s3cret\x00tail", "s3cret\udcfftail"])
def test_secret_with_nul_or_surrogate_stays_out_of_the_log_line(monkeypatch, logged, token):
    # the line is logged with these characters escaped: the escaped form of a secret is masked too
    patch_exits(monkeypatch)
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": "http://127.0.0.1:9", "token": token}}
    run_module(main_of("device_profile_info"), {"cloud": cloud, "request_retries": -1})
    assert logged and not any("s3cret" in line for line in logged), logged
