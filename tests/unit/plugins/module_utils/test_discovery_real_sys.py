# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Discovery against the real /sys of the machine the tests run on, compared with ``lspci -D -n -k``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

_LSPCI_PLACES = ("/usr/bin/lspci", "/sbin/lspci", "/usr/sbin/lspci")
LSPCI = shutil.which("lspci") or next((p for p in _LSPCI_PLACES if os.access(p, os.X_OK)), None)
_HEAD = re.compile(r"^([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) ([0-9a-f]{4}): ([0-9a-f]{4}):([0-9a-f]{4})"
                   r"(?: \(rev ([0-9a-f]{2})\))?")


def parse_lspci(text):
    """``lspci -D -n -k`` -> {address: {class, vendor, device, revision, subsystem, driver}}."""
    out = {}
    cur = None
    for line in text.splitlines():
        m = _HEAD.match(line)
        if m:
            cur = out[m.group(1)] = {"class": m.group(2), "vendor": m.group(3), "device": m.group(4),
                                     "revision": m.group(5) or "00", "subsystem": None, "driver": None}
            continue
        line = line.strip()
        if cur is None:
            continue
        if line.startswith("Subsystem:"):
            cur["subsystem"] = line.split(":", 1)[1].strip()
        elif line.startswith("Kernel driver in use:"):
            cur["driver"] = line.split(":", 1)[1].strip()
    return out


def test_parse_lspci_sample():
    text = ("0000:00:00.0 0600: 8086:0d57\n"
            "0000:3b:00.0 0302: 10de:1eb8 (rev a1)\n\tSubsystem: 10de:12a2\n\tKernel driver in use: nvidia\n"
            "\tKernel modules: nvidiafb, nouveau, nvidia\n")
    got = parse_lspci(text)
    assert got["0000:00:00.0"] == {"class": "0600", "vendor": "8086", "device": "0d57", "revision": "00",
                                   "subsystem": None, "driver": None}
    assert got["0000:3b:00.0"]["subsystem"] == "10de:12a2" and got["0000:3b:00.0"]["driver"] == "nvidia"


@pytest.mark.skipif(LSPCI is None, reason="lspci (pciutils) is not installed on this machine")
@pytest.mark.skipif(not os.path.isdir("/sys/bus/pci/devices"), reason="this machine has no /sys/bus/pci")
def test_matches_lspci_on_this_machine():
    proc = subprocess.run([LSPCI, "-D", "-n", "-k"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True,
                          universal_newlines=True)
    expected = parse_lspci(proc.stdout)
    result = discover(Sysfs("/"), include_all=True, in_use=False, nvidia_smi="never")
    got = dict((r["address"], r) for r in result["accelerators"])
    # an Alveo management PF is folded into its user PF's record
    folded = set(r["fpga"]["management_address"] for r in got.values()
                 if r["fpga"] and r["fpga"]["management_address"] and r["fpga"]["management_address"] != r["address"])
    assert set(got) | folded == set(expected)
    for addr, e in expected.items():
        if addr in folded:
            continue
        r = got[addr]
        assert r["class_id"][:4] == e["class"], addr
        assert (r["vendor_id"], r["device_id"]) == (e["vendor"], e["device"]), addr
        assert r["revision"] == e["revision"], addr
        sub = "%s:%s" % (r["subsystem_vendor_id"], r["subsystem_device_id"])
        if e["subsystem"] is not None:
            assert sub == e["subsystem"], addr
        else:  # lspci omits an all-zero subsystem (and a bridge's, when it has none)
            assert sub in ("0000:0000", "None:None") or r["class_id"].startswith("0604"), addr
        assert r["driver"] == e["driver"], addr
        assert r["warnings"] == [], (addr, r["warnings"])
    assert result["host"]["pci_functions"] == len(expected)
