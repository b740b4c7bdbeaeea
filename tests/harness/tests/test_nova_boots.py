# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Servers booted by Nova's own code (tests/harness/nova_session.py: Nova 34's functional harness) on what the
collection rendered and wrote, each with the case where the collection's part is missing and the boot fails.

- vGPU: nova.conf from ``_novaconf.render`` (two functions on two mdev GPUs), the function traits on Nova's pGPU
  providers written by ``placement_provider_tree`` (reporter nova) against the harness's own Placement; a flavor
  asking ``resources:VGPU=1`` and one function's trait boots on the GPU that carries that function, and the guest
  XML Nova's libvirt driver wrote holds an mdev made on that GPU. Before the trait write: NoValidHost.
- PCI (the X710 VFs): with the device_spec rendered without its ``traits`` tag, the flavor asking for the alias
  gets NoValidHost; with the rendered device_spec (nova-compute restarted) it boots on the provider with the trait.

Needs .venv-nova (tests/harness/setup-venv.sh nova). Run: .venv/bin/python -m pytest tests/harness/tests"""
import copy
import json
import os
import subprocess
import sys

import pytest

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(os.path.dirname(HARNESS))
SIMULATOR = os.path.join(TOP, "tests", "simulator")
if SIMULATOR not in sys.path:
    sys.path.insert(0, SIMULATOR)

import accelsim  # noqa: E402  pylint: disable=wrong-import-position
import servicelib  # noqa: E402  pylint: disable=wrong-import-position
import yaml  # noqa: E402  pylint: disable=wrong-import-position
from ansible.module_utils.testing import patch_module_args  # noqa: E402  pylint: disable=wrong-import-position

from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs  # noqa: E402
from ansible_collections.accelops.lifecycle.plugins.modules import placement_provider_tree as tree_mod  # noqa: E402

NOVA_PYTHON = os.path.join(servicelib.service_venv("nova"), "bin", "python")
SESSION = os.path.join(HARNESS, "nova_session.py")
NODE = "cn1.example.org"


def need_nova():
    if not os.access(NOVA_PYTHON, os.X_OK):
        why = "no .venv-nova: run tests/harness/setup-venv.sh nova"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def ini_flags(*texts):
    """{group: {option: value}} of rendered INI files, a repeated option (device_spec, alias) as a list; an alias
    in both the compute's file and nova-api's counts once, as it is one alias."""
    out = {}
    for text in texts:
        group = None
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                group = line.strip("[]")
                continue
            key, value = (x.strip() for x in line.split("=", 1))
            opts = out.setdefault(group, {})
            if key in ("device_spec", "alias"):
                have = opts.setdefault(key, [])
                if value not in have:
                    have.append(value)
            else:
                opts[key] = value
    return out


class Session(object):
    """One nova_session.py: requests in, answers out (see its docstring)."""

    def __init__(self, setup, log):
        self.log = log
        with open(log, "w") as err:
            self.proc = subprocess.Popen([NOVA_PYTHON, SESSION], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=err, text=True)
        self.hello = self.ask(setup)

    def ask(self, req):
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            with open(self.log) as f:
                pytest.fail("nova_session.py stopped:\n%s" % f.read()[-6000:])
        ans = json.loads(line)
        assert "error" not in ans, ans["error"]
        return ans

    def close(self):
        # nothing of the session outlives it: stopped at once rather than through the harness's graceful shutdown
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=60)
        self.proc.stdin.close()
        self.proc.stdout.close()

    def cloud(self):
        # Nova's harness serves Placement with its noauth middleware: any token, admin as Nova's fixture sends
        e = self.hello["endpoint"]
        return {"auth_type": "admin_token", "auth": {"endpoint": e, "token": "admin"},
                "placement_endpoint_override": e, "placement_api_version": "1.39"}


@pytest.fixture
def session(tmp_path):
    opened = []

    def start(setup):
        need_nova()
        s = Session(setup, str(tmp_path / ("nova-session-%d.log" % len(opened))))
        opened.append(s)
        return s
    yield start
    for s in opened:
        s.close()


def run_module(module, args, capsys):
    a = dict(args, _ansible_check_mode=False, _ansible_diff=False)
    with patch_module_args(a):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def no_valid_host(ans):
    assert ans["status"] == "ERROR" and "No valid host" in (ans["fault"] or ""), ans


# ------------------------------------------------------------------------------------------------ vGPU

GPU_A, GPU_B = "0000:18:00.0", "0000:3b:00.0"
VGPU_FUNCTIONS = [
    {"name": "t4-2q", "match": {"address": GPU_A}, "vgpu": {"type": "GRID T4-2Q", "count": 1}},
    {"name": "t4-1q", "match": {"address": GPU_B}, "vgpu": {"type": "GRID T4-1Q", "count": 1}}]


def two_t4_host(root):
    """The gpu-mdev lab (a Tesla T4 with one T4-2Q vGPU) with a second T4 behind its own root port, on which the
    collection has made one T4-1Q vGPU."""
    with open(os.path.join(SIMULATOR, "labs", "gpu-mdev.yaml")) as f:
        lab = yaml.safe_load(f)
    port, gpu = (copy.deepcopy(x) for x in lab["functions"][:2])
    port.update(bdf="0000:3a:00.0", iommu_group=30)
    gpu.update(bdf=GPU_B, parent="0000:3a:00.0", iommu_group=31)
    gpu["gpu"].update(uuid="GPU-5c4fb7d7-2a7a-1a0e-6e1b-0c2f4a3d9b12", serial="1321020012346")
    lab["functions"] += [port, gpu]
    mdev = {"uuid": "0e1c6f5a-8c1d-4a55-9d86-6f2b8f2f7a01", "parent": GPU_B, "type": "nvidia-230"}
    lab["mdevs"].append(mdev)
    lab["mdevctl"].append(dict(mdev, auto=True))
    lab["name"] = "gpu-mdev-two"
    accelsim.render_tree(lab, root)
    return discover(Sysfs(root=root))


def test_a_vgpu_flavor_with_the_function_trait_boots_on_the_gpu_that_carries_it(session, tmp_path, capsys):
    disc = two_t4_host(str(tmp_path / "host"))
    rendered = nc.render(VGPU_FUNCTIONS, disc, {"host": NODE})
    assert rendered["problems"] == []
    expected = nc.nova_expected_providers(VGPU_FUNCTIONS, disc, {"host": NODE}, NODE)
    types = dict((a, m["type"]) for m in rendered["mdev_types"] for a in m["device_addresses"])
    devices = []
    for p in expected:
        _dom, bus, rest = p["address"].split(":")
        slot, fn = (int(x, 16) for x in rest.split("."))
        devices.append({"type": "MDEV_TYPES", "bus": int(bus, 16), "slot": slot, "function": fn,
                        "mdev_types": [{"id": types[p["address"]], "available": p["total"]}]})
    s = session({"kind": "vgpu", "nodename": NODE, "devices": devices, "flags": ini_flags(rendered["nova_conf"])})
    pgpu = dict((p["functions"][0], p["name"]) for p in expected)
    flavor = {"resources:VGPU": "1", "trait:%s" % _naming.function_trait("t4-1q"): "required"}

    # no function trait on any pGPU yet: Nova finds no host
    no_valid_host(s.ask({"op": "boot", "extra_spec": flavor}))

    # the collection adds the function traits to Nova's pGPU providers (the harness's own Placement)
    r = run_module(tree_mod, {"cloud": s.cloud(), "discovery": disc, "host": NODE, "reporter": "nova",
                              "function_names": _declaration.resolve(VGPU_FUNCTIONS, disc)["function_names"],
                              "generation_cache": str(tmp_path / "gen.json")}, capsys)
    assert not r.get("failed"), r
    assert r["changed"] is True

    for fn, parent in (("t4-1q", GPU_B), ("t4-2q", GPU_A)):
        flavor = {"resources:VGPU": "1", "trait:%s" % _naming.function_trait(fn): "required"}
        ans = s.ask({"op": "boot", "extra_spec": flavor})
        assert ans["status"] == "ACTIVE", ans
        (alloc,) = [a for a in ans["allocations"] if a["name"] != NODE]
        assert alloc["name"] == pgpu[fn] and alloc["resources"] == {"VGPU": 1}, ans["allocations"]
        assert _naming.function_trait(fn) in alloc["traits"]
        # the guest Nova's libvirt driver defined has one mdev, made on that GPU
        (mdev,) = ans["mdevs"]
        assert mdev["parent"] == "pci_" + parent.replace(":", "_").replace(".", "_"), ans
        assert any(mdev["uuid"] in h and "type=\"mdev\"" in h for h in ans["hostdevs"]), ans["hostdevs"]


# ------------------------------------------------------------------------------------------------ PCI

def pci_host(case, root):
    """(discovery, declaration, rendered, the fake libvirt's devices, PF addresses) of a test_nova_oracle case."""
    from test_nova_oracle import CASES, fake_libvirt_devices  # pylint: disable=import-outside-toplevel
    lab, prepare, functions = CASES[case]
    h = accelsim.render_tree(lab, root)
    if prepare:
        prepare(h)
    disc = discover(Sysfs(root=root))
    rendered = nc.render(functions, disc, {"host": NODE})
    assert rendered["problems"] == []
    expected = [p for p in nc.nova_expected_providers(functions, disc, {"host": NODE}, NODE) if p["kind"] == "pci"]
    pfs = [r["address"] for r in disc["accelerators"] if (r.get("sriov") or {}).get("totalvfs")]
    return disc, functions, rendered, fake_libvirt_devices(expected, disc), pfs, expected


def test_a_pci_flavor_finds_no_host_without_the_function_trait_in_the_device_spec(session, tmp_path):
    """The X710 VFs: the same nova.conf with the device_spec's ``traits`` tag left out gives NoValidHost for the
    alias (which asks for the function trait); with the tag as rendered (nova-compute restarted) the server boots
    on Nova's provider of the PF, which carries the trait."""
    disc, _functions, rendered, devices, pfs, expected = pci_host("nic-sriov", str(tmp_path / "host"))
    flags = ini_flags(rendered["nova_conf"], rendered["alias_conf"])
    assert flags["filter_scheduler"]["pci_in_placement"] == "True"
    bare = copy.deepcopy(flags)
    specs = [json.loads(s) for s in bare["pci"]["device_spec"]]
    assert all(s.pop("traits") for s in specs)
    bare["pci"]["device_spec"] = [json.dumps(s) for s in specs]
    s = session({"kind": "pci", "nodename": NODE, "devices": devices, "pfs": pfs, "flags": bare})
    alias = rendered["aliases"][0]["name"]
    flavor = {"pci_passthrough:alias": "%s:1" % alias}
    no_valid_host(s.ask({"op": "boot", "extra_spec": flavor}))

    s.ask({"op": "flags", "flags": {"pci": {"device_spec": flags["pci"]["device_spec"]}}})
    s.ask({"op": "restart"})
    ans = s.ask({"op": "boot", "extra_spec": flavor})
    assert ans["status"] == "ACTIVE", ans
    (alloc,) = [a for a in ans["allocations"] if a["name"] != NODE]
    assert alloc["name"] == expected[0]["name"] and _naming.function_trait(alias) in alloc["traits"], ans
    assert len(ans["hostdevs"]) == 1, ans["hostdevs"]


# ------------------------------------------------------------------------------------------------ one-time use

def test_a_one_time_use_device_is_given_out_again_only_after_the_collection_reset_it(session, tmp_path, capsys):
    """The MI300X passed through whole, declared one-time-use: Nova reserves its provider once the server that had
    it is gone; the collection lists it, a reset that fails (the kernel offers no reset for it) keeps it reserved
    and the next boot finds no host; once the reset succeeds and is verified the collection releases it and the
    next server boots on it."""
    from ansible_collections.accelops.lifecycle.plugins.modules import one_time_use_reset as reset_mod  # noqa: E501  pylint: disable=import-outside-toplevel
    from ansible_collections.accelops.lifecycle.plugins.modules import placement_one_time_use as otu_mod  # noqa: E501  pylint: disable=import-outside-toplevel
    root = str(tmp_path / "host")
    functions = [{"name": "mi300x", "match": {"address": "0000:83:00.0"}, "passthrough": {}}]
    accelsim.render_tree("gpu-amd-instinct", root)
    disc = discover(Sysfs(root=root))
    options = {"host": NODE, "one_time_use": ["mi300x"]}
    rendered = nc.render(functions, disc, options)
    assert rendered["problems"] == []
    (expected,) = nc.nova_expected_providers(functions, disc, options, NODE)
    assert "HW_PCI_ONE_TIME_USE" in expected["traits"]
    from test_nova_oracle import fake_libvirt_devices  # pylint: disable=import-outside-toplevel
    s = session({"kind": "pci", "nodename": NODE, "devices": fake_libvirt_devices([expected], disc),
                 "pfs": [r["address"] for r in disc["accelerators"] if (r.get("sriov") or {}).get("totalvfs")],
                 "flags": ini_flags(rendered["nova_conf"], rendered["alias_conf"])})
    flavor = {"pci_passthrough:alias": "mi300x:1"}
    addr = expected["address"]

    def otu(**args):
        r = run_module(otu_mod, dict({"cloud": s.cloud(), "host": NODE}, **args), capsys)
        assert not r.get("failed"), r
        return r

    def reset():
        r = run_module(reset_mod, {"root": root, "devices": otu()["to_reset"], "functions": functions}, capsys)
        assert not r.get("failed"), r
        return r

    first = s.ask({"op": "boot", "extra_spec": flavor})
    assert first["status"] == "ACTIVE", first
    assert [a["name"] for a in first["allocations"] if a["name"] != NODE] == [expected["name"]]
    assert otu()["to_reset"] == []           # allocated: in use, not waiting for a reset
    s.ask({"op": "delete", "id": first["id"]})
    assert otu()["to_reset"] == [addr]       # Nova left it reserved

    # the reset fails (this host's kernel offers no reset method for it): it stays out
    r = reset()
    assert r["reset"] == [] and [k["address"] for k in r["kept"]] == [addr], r
    assert "no reset" in r["kept"][0]["reason"], r
    assert otu(release=r["reset"])["released"] == []
    no_valid_host(s.ask({"op": "boot", "extra_spec": flavor}))

    # the kernel offers a reset (its sysfs reset attribute): reset, verified, released, given out again
    with open(os.path.join(root, "sys/bus/pci/devices", addr, "reset"), "w"):
        pass
    r = reset()
    assert r["reset"] == [addr] and r["kept"] == [], r
    assert otu(release=r["reset"])["released"] == [addr]
    again = s.ask({"op": "boot", "extra_spec": flavor})
    assert again["status"] == "ACTIVE", again
    assert [a["name"] for a in again["allocations"] if a["name"] != NODE] == [expected["name"]]
