# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The accelerator_info module: options, result, facts, check mode, bad input."""

from __future__ import annotations

import gc
import os
import sys

import pytest
import yaml

from ansible.module_utils import basic

from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_info

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "module_utils"))
from hostbuilder import HostTree  # noqa: E402  pylint: disable=wrong-import-position
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from modrunner import patch_module_args  # noqa: E402  pylint: disable=wrong-import-position


class Exit(Exception):
    def __init__(self, kind, result):
        super(Exit, self).__init__(kind)
        self.kind = kind
        self.result = result


@pytest.fixture(autouse=True)
def _no_exit(monkeypatch):
    def exit_json(self, **kw):
        kw.setdefault("warnings", list(getattr(self, "_warnings", [])))
        raise Exit("exit", kw)

    def fail_json(self, msg, **kw):
        kw["msg"] = msg
        raise Exit("fail", kw)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, w: warnings.append(w))
    return warnings


def run(args):
    with patch_module_args(args):
        with pytest.raises(Exit) as e:
            accelerator_info.main()
    return e.value


@pytest.fixture
def tree(tmp_path):
    t = HostTree(str(tmp_path / "root"))
    t.add_pci("0000:00:00.0", "8086", "2020", "060000")
    t.add_pci("0000:18:00.0", "10de", "1eb8", "030200", driver="vfio-pci", iommu_group=21)
    t.add_domain("instance-0000002a", hostdevs=["0000:18:00.0"])
    return t


def test_default_run(tree):
    e = run({"root": tree.root, "nvidia_smi": "never"})
    assert e.kind == "exit"
    r = e.result
    assert r["changed"] is False and r["schema_version"] == 1
    assert [a["address"] for a in r["accelerators"]] == ["0000:18:00.0"]
    u = r["accelerators"][0]["units"][0]
    assert u["in_use"] and u["in_use_by"][0]["name"] == "instance-0000002a"
    assert r["host"]["root"] == tree.root and r["host"]["domains"] == ["instance-0000002a"]
    assert "ansible_facts" not in r


def test_publish_facts_include_all_and_check_mode(tree):
    e = run({"root": tree.root, "include_all": True, "publish_facts": True, "_ansible_check_mode": True,
             "nvidia_smi": "never"})
    r = e.result
    assert [a["address"] for a in r["accelerators"]] == ["0000:00:00.0", "0000:18:00.0"]
    assert r["ansible_facts"]["accelerators"] == r["accelerators"]


def test_filters(tree):
    r = run({"root": tree.root, "include_all": True, "families": ["pci"], "nvidia_smi": "never"}).result
    assert [a["address"] for a in r["accelerators"]] == ["0000:00:00.0"]
    r = run({"root": tree.root, "include_all": True, "vendor_ids": ["10DE"], "addresses": ["18:00.*"],
             "nvidia_smi": "never"}).result
    assert [a["address"] for a in r["accelerators"]] == ["0000:18:00.0"]


@pytest.mark.parametrize("args,needle", [
    ({"families": ["tpu"]}, "families"),
    ({"vendor_ids": ["nvidia"]}, "vendor_ids"),
    ({"addresses": ["3b:00"]}, "addresses"),
    ({"libvirt_run_dir": "run/libvirt"}, "libvirt_run_dir"),
    ({"root": "/nonexistent/root"}, "root"),
    ({"root": "relative"}, "root"),
    ({"include_all": "maybe"}, "include_all"),
])
def test_bad_input_fails_naming_the_option(tree, args, needle):
    args.setdefault("root", tree.root)
    e = run(args)
    assert e.kind == "fail"
    assert needle in e.result["msg"]


def test_device_warnings_become_module_warnings(tree, _no_exit):
    d = tree.dev("0000:18:00.0")
    os.unlink(tree.path(d + "/numa_node"))
    os.mkdir(tree.path(d + "/numa_node"))
    r = run({"root": tree.root, "nvidia_smi": "never"}).result
    assert r["accelerators"][0]["warnings"]
    assert any(w.startswith("0000:18:00.0: numa_node:") for w in _no_exit)


def test_many_device_warnings_are_capped(tmp_path, _no_exit):
    t = HostTree(str(tmp_path / "r"))
    for i in range(30):
        d = t.add_pci("0000:%02x:00.0" % (0x20 + i), "10de", "1eb8", "030200", driver="nvidia")
        os.unlink(t.path(d + "/numa_node"))
        os.mkdir(t.path(d + "/numa_node"))
    run({"root": t.root, "nvidia_smi": "never"})
    assert len(_no_exit) == accelerator_info.MAX_DEVICE_WARNINGS + 1
    assert "10 more device warnings" in _no_exit[-1]


def test_documentation_is_valid_yaml():
    doc = yaml.safe_load(accelerator_info.DOCUMENTATION)
    ret = yaml.safe_load(accelerator_info.RETURN)
    ex = yaml.safe_load(accelerator_info.EXAMPLES)
    assert doc["module"] == "accelerator_info"
    assert doc["attributes"]["check_mode"]["support"] == "full"
    assert set(doc["options"]) == {"families", "vendor_ids", "addresses", "include_all", "in_use", "libvirt_run_dir",
                                   "nvidia_smi", "pci_ids_path", "publish_facts", "vf_detail"}
    from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import RECORD_KEYS
    assert set(ret["accelerators"]["contains"]) == set(RECORD_KEYS)
    assert isinstance(ex, list) and ex


@pytest.mark.parametrize("exiting", [False, True])
def test_the_collector_is_paused_for_the_run_and_restored_unless_the_process_ends(monkeypatch, exiting):
    """main() pauses the cyclic garbage collector for the run; it restores it for an in-process caller, and leaves it
    paused with every object frozen when the process ends with the module (run as a program: the interpreter's exit
    would pass over all of them once more)."""
    seen = []
    monkeypatch.setattr(accelerator_info, "run_module", lambda: seen.append(gc.isenabled()))
    assert gc.isenabled()
    frozen = gc.get_freeze_count()  # not always 0 at the start: CPython 3.12 starts with objects frozen
    try:
        accelerator_info.main(exiting=exiting)
        assert seen == [False]
        assert gc.isenabled() is not exiting
        assert (gc.get_freeze_count() > frozen) is exiting
    finally:
        gc.unfreeze()
        gc.enable()
