# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cyborg through Nova: a flavor with ``accel:device_profile`` (a profile the collection made) boots in Nova's
functional harness, whose own Cyborg client talks to the real Cyborg, on the card the collection programmed.

The host: a simulated host (FUSE) with two Intel PACs; the collection's fpga_program loads a different function
on each. Cyborg (API, conductor, and its agent with its own Intel FPGA driver on the simulated /sys,
tests/harness/svc_cyborg_agent.py) reports both cards as children of Nova's compute node provider in the
harness's Placement, the one Nova uses too. The collection writes the function traits on Cyborg's providers
(placement_provider_tree, reporter cyborg) and creates the device profile (device_profile); Nova does the rest
(tests/harness/nova_cyborg.py): its API asks Cyborg for the profile's request groups, its scheduler asks
Placement, its conductor creates and binds the ARQ in Cyborg, Cyborg tells Nova's API that it is bound, its
compute reads the bound ARQ and its libvirt driver writes the guest XML with the hostdev.

Needs root, /dev/fuse and unshare (CI runs as root), .venv-nova, .venv-cyborg and .venv-services."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

import nova_cyborg
import servicelib
import svc_cyborg_agent
from fixtures import collection_import_root

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(HARNESS), "simulator"))
import accelsim  # noqa: E402  pylint: disable=wrong-import-position

NOVA_PYTHON = os.path.join(servicelib.service_venv("nova"), "bin", "python")
MODULES = "ansible_collections.accelops.lifecycle.plugins.modules."
NODENAME = "cyborg-nova.example.org"
NOVA_TOKEN = "cyborg-service"     # what Cyborg's [nova] section sends; Nova's side knows it as a service identity

# Two PACs: the lab fpga-opae's card at 5e:00.0, and the same card at af:00.0 behind a port of its own.
CARDS = {"0000:5e:00.0": ("6a4b0d3f8c2e5f7b9d1c3e5a7b9d1f23", "nova-gzip"),
         "0000:af:00.0": ("5f3a9c2e7b1d4e6a8c0b2d4f6a8c0e12", "nova-crc")}
WANTED = "0000:af:00.0"   # the card whose function the profile asks for (not the first one in PCI order)
SECOND_PAC = [
    {"bdf": "0000:ae:00.0", "vendor": 0x8086, "device": 0x2030, "class": 0x060400, "revision": 0x04,
     "driver": "pcieport", "numa_node": 0, "iommu_group": 42, "link": {"speed": "8.0 GT/s PCIe", "width": 8}},
    {"bdf": "0000:af:00.0", "parent": "0000:ae:00.0", "vendor": 0x8086, "device": 0x09c4,
     "subsystem_vendor": 0x8086, "subsystem_device": 0x0000, "class": 0x120000, "revision": 0x01,
     "driver": "intel-fpga-pci", "numa_node": 0, "iommu_group": 43, "irq": 67,
     "link": {"speed": "8.0 GT/s PCIe", "width": 8},
     "sriov": {"totalvfs": 1, "vf_device": 0x09c5, "offset": 1, "stride": 1, "vf_driver": "vfio-pci"},
     "fpga": {"layout": "opae", "index": 1, "interface_id": "38558f8b33385e6ba9a5c6ac75f8e59f",
              "afu_id": "d8424dc4a4a93c849c1ad7c6d7b3c2a7", "bitstream_id": "0x123000200000185",
              "bitstream_metadata": "0x1111916", "socket_id": 0}},
]


def run_module(name, args):
    """One of the collection's modules, run as Ansible runs a module (its arguments in a file)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"ANSIBLE_MODULE_ARGS": args}, f)
    try:
        env = dict(os.environ, PYTHONPATH=collection_import_root())
        p = subprocess.run([sys.executable, "-m", MODULES + name, f.name], capture_output=True, text=True,
                           env=env, timeout=120, check=False)
    finally:
        os.unlink(f.name)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise AssertionError("%s: no JSON: %s %s" % (name, p.stdout[-2000:], p.stderr[-2000:]))
    assert not out.get("failed"), "%s failed: %s" % (name, out)
    return out


class Nova(object):
    """nova_cyborg.py: Nova's functional harness in a process of its own, one command at a time."""

    def __init__(self, state, placement):
        self.state = state
        nova_cyborg.launch(state, placement.endpoint, placement.token, [NODENAME], NOVA_TOKEN, python=NOVA_PYTHON)
        self.ready = None

    def wait_ready(self):
        self.ready = nova_cyborg.wait_ready(self.state)
        return self

    def ask(self, msg):
        got = nova_cyborg.request(self.state, msg)
        assert not got.get("error"), got
        return got

    def boot(self, profile, cyborg):
        """A server whose flavor has ``accel:device_profile=profile``, Nova's Cyborg client pointed at Cyborg."""
        return self.ask({"boot": profile, "cyborg": cyborg["cyborg_agent_endpoint"],
                         "token": cyborg["cyborg_agent_token"],
                         "service_token": cyborg["cyborg_agent_service_token"]})

    def delete(self, server):
        return self.ask({"delete": server})

    def stop(self):
        nova_cyborg.stop(self.state)


@pytest.fixture(scope="module")
def cloud(placement):
    """The host with both cards programmed by the collection, Nova on it, Cyborg reporting into Nova's tree."""
    for need, why in ((os.geteuid() == 0, "root"), (shutil.which("unshare"), "unshare"),
                      (os.path.exists("/dev/fuse"), "/dev/fuse"), (os.access(NOVA_PYTHON, os.X_OK), ".venv-nova")):
        if not need:
            pytest.fail("needs %s (CI has it)" % why, pytrace=False)
    t0 = time.time()
    state = tempfile.mkdtemp(prefix="accelops-nova-cyborg-")
    lab = os.path.join(state, "two-pacs.yaml")
    with open(lab, "w") as f:
        json.dump({"name": "two-pacs", "description": "two Intel PACs", "include": ["fpga-opae"],
                   "functions": SECOND_PAC}, f)
    root = os.path.join(state, "host")
    os.makedirs(root)
    fuse = accelsim.mount(lab, root, state_dir=os.path.join(state, "sim"))
    nova = None
    try:
        # Nova starts (most of the time here) while the collection programs the cards
        nova = Nova(state, placement)
        found = run_module("accelerator_info", {"root": root, "families": ["fpga"]})
        for addr, (afu, _name) in sorted(CARDS.items()):
            region = [a for a in found["accelerators"] if a["address"] == addr][0]["fpga"]["regions"][0]
            gbs = os.path.join(state, afu + ".gbs")
            accelsim.make_gbs(gbs, region["interface_id"], afu)
            with open(gbs, "rb") as f:
                sha = hashlib.sha256(f.read()).hexdigest()
            out = run_module("fpga_program", {"root": root, "address": addr, "bitstream": gbs, "sha256": sha,
                                              "function_id": afu})
            assert out["changed"], out
        after = run_module("accelerator_info", {"root": root, "families": ["fpga"]})
        # each card reads back the function the collection loaded on it
        assert dict((a["address"], a["function"]["trait"]) for a in after["accelerators"] if a["address"] in CARDS) \
            == dict((addr, "CUSTOM_FPGA_FUNCTION_ID_INTEL_" + afu.upper()) for addr, (afu, _n) in CARDS.items())
        t_prog = time.time() - t0
        nova.wait_ready()
        t_nova = time.time()
        cy = svc_cyborg_agent.start(state, placement.endpoint, os.path.join(root, "sys"),
                                    after["host"]["hostname"], NODENAME, nova=nova.ready["nova_api"],
                                    nova_token=NOVA_TOKEN)
        sys.stderr.write("programmed %.1f s, nova %.1f s, cyborg %.1f s\n" % (t_prog, t_nova - t0, time.time() - t_nova))
        yield {"state": state, "root": root, "discovery": after, "nova": nova, "cyborg": cy,
               "placement": placement, "setup_s": time.time() - t0}
    finally:
        if nova is not None:
            nova.stop()
        svc_cyborg_agent.stop(state)
        fuse.unmount()
        placement.wipe()
        if not os.environ.get("ACCELOPS_KEEP_STATE"):     # set: keep Nova's and Cyborg's logs to look at
            shutil.rmtree(state, ignore_errors=True)


def cyborg_arqs(cloud, instance):
    """The accelerator requests Cyborg's API has for an instance."""
    cy = cloud["cyborg"]
    req = urllib.request.Request(cy["cyborg_agent_endpoint"] + "/v2/accelerator_requests?instance=" + instance,
                                 headers={"X-Auth-Token": cy["cyborg_agent_token"],
                                          "OpenStack-API-Version": "accelerator 2.2"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())["arqs"]


def cyborg_providers(cloud):
    p = cloud["placement"]
    tree = p.get("/resource_providers?in_tree=%s" % cloud["nova"].ready["compute_rps"][NODENAME])["resource_providers"]
    return dict((x["name"], x) for x in tree if x["uuid"] != cloud["nova"].ready["compute_rps"][NODENAME])


def profile(cloud):
    """The collection's device profile asking for WANTED's function by name on an Intel PAC of this FIM."""
    card = [a for a in cloud["discovery"]["accelerators"] if a["address"] == WANTED][0]
    out = run_module("device_profile", {
        "cloud": {"auth_type": "admin_token",
                  "auth": {"endpoint": cloud["cyborg"]["cyborg_agent_endpoint"],
                           "token": cloud["cyborg"]["cyborg_agent_token"]},
                  "accelerator_endpoint_override": cloud["cyborg"]["cyborg_agent_endpoint"] + "/v2"},
        "name": "nova-" + CARDS[WANTED][1],
        "groups": [{"family": "fpga", "vendor": "intel", "function": CARDS[WANTED][1],
                    "traits": ["CUSTOM_FPGA_INTEL_PAC_ARRIA10", card["fpga"]["regions"][0]["trait"]]}]})
    return out["profile"]["name"]


def test_without_the_function_traits_nova_finds_no_host(cloud):
    """Cyborg reports both cards with their function ids, but the profile asks for the function by the name
    only the collection writes: before it does, Nova's scheduler finds no host."""
    providers = cyborg_providers(cloud)
    assert sorted(providers) == sorted("%s_%s" % (cloud["discovery"]["host"]["hostname"], a) for a in CARDS)
    name_trait = "CUSTOM_FUNCTION_" + CARDS[WANTED][1].upper().replace("-", "_")
    for p in providers.values():
        assert name_trait not in cloud["placement"].traits(p["uuid"])
    got = cloud["nova"].boot(profile(cloud), cloud["cyborg"])
    assert got["status"] == "ERROR", got
    assert "No valid host" in (got["fault"] or ""), got
    assert got["hostdevs"] == []
    assert cyborg_arqs(cloud, got["server"]) == []
    assert cloud["nova"].delete(got["server"]) == {"deleted": got["server"]}


def test_the_profile_boots_on_the_card_the_collection_programmed(cloud):
    t0 = time.time()
    tree = run_module("placement_provider_tree", {
        "cloud": cloud["placement"].cloud(), "discovery": cloud["discovery"], "host": NODENAME,
        "reporter": "cyborg", "function_names": dict(CARDS.values()), "use_generation_cache": False})
    assert tree["changed"], tree
    providers = cyborg_providers(cloud)
    wanted = providers["%s_%s" % (cloud["discovery"]["host"]["hostname"], WANTED)]
    got = cloud["nova"].boot(profile(cloud), cloud["cyborg"])
    booted = time.time() - t0
    assert got["status"] == "ACTIVE", got
    # the guest XML Nova's libvirt driver wrote holds the card with the function, and only it
    assert got["hostdevs"] == [WANTED], got
    # the allocation Nova's scheduler wrote is on Cyborg's provider for that card (and the compute node)
    allocations = cloud["placement"].get("/allocations/%s" % got["server"])["allocations"]
    assert allocations[wanted["uuid"]]["resources"] == {"FPGA": 1}, (allocations, providers)
    assert sorted(allocations) == sorted([wanted["uuid"], cloud["nova"].ready["compute_rps"][NODENAME]]), allocations
    # Nova's conductor created the ARQ from the profile and bound it to that provider on this host
    arqs = cyborg_arqs(cloud, got["server"])
    assert [(a["state"], a["device_rp_uuid"], a["hostname"], a["attach_handle_type"]) for a in arqs] == [
        ("Bound", wanted["uuid"], NODENAME, "PCI")], arqs
    # Cyborg told Nova's API that it is bound. Cyborg binds within the conductor's call, before the instance
    # has a host, so Nova's API answers 422 for it (Cyborg expects that, LP#1855752) and Nova's compute finds
    # the ARQ bound when it asks Cyborg (ComputeManager._get_bound_arq_resources, exit_wait_early).
    assert got["events"] == [{
        "sent": [{"name": "accelerator-request-bound", "server_uuid": got["server"], "tag": arqs[0]["uuid"],
                  "status": "completed"}],
        "answer": [{"name": "accelerator-request-bound", "server_uuid": got["server"], "tag": arqs[0]["uuid"],
                    "status": "failed", "code": 422}]}], got["events"]
    # deleting the server: Nova deletes its ARQ in Cyborg and its allocation in Placement
    assert cloud["nova"].delete(got["server"]) == {"deleted": got["server"]}
    assert cyborg_arqs(cloud, got["server"]) == []
    assert cloud["placement"].get("/allocations/%s" % got["server"])["allocations"] == {}
    sys.stderr.write("setup %.1f s, traits and boot %.1f s, delete %.1f s\n"
                     % (cloud["setup_s"], booted, time.time() - t0 - booted))
