# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared by the reliability tests: discovery records, an in-process module runner that tells a clean
failure from a traceback, an independent plain-HTTP read of a provider tree, and the request positions the
gate's fault sweeps take (the first request of each kind and the last)."""

from __future__ import annotations

import os
import re
import sys
import traceback

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from fixtures import collection_import_root

AFU_GZIP = "d8424dc4-a4a1-c3d4-3213-4b09c1d7f2a2"
AFU_AES = "f7df405c-bd7a-cf72-22f1-44b0b93acd18"
FPGA_ADDR, GPU_ADDR, NIC_ADDR, QAT_ADDR = "0000:5e:00.0", "0000:3b:00.0", "0000:af:00.0", "0000:3d:00.0"


def fpga_record(afu=AFU_GZIP, addr=FPGA_ADDR):
    return {"address": addr, "family": "fpga", "vendor_id": "8086", "device_id": "09c4", "numa_node": 0,
            "physfn": None, "programming_model": "dynamic",
            "function": {"id": afu, "name": None} if afu else None,
            "fpga": {"vendor": "intel", "regions": [], "ports": [{"id": "intel-fpga-port.0", "afu_id": afu}]},
            "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []}, "units": []}


def gpu_record(addr=GPU_ADDR):
    return {"address": addr, "family": "gpu", "vendor_id": "10de", "device_id": "1eb8", "numa_node": 1,
            "physfn": None, "programming_model": "fixed", "function": None, "gpu": {"mdev_types": []},
            "sriov": {"totalvfs": 0, "numvfs": 0, "vfs": []}, "units": [{"kind": "device", "id": addr}]}


def nic_record(numvfs=8, addr=NIC_ADDR):
    return {"address": addr, "family": "nic", "vendor_id": "8086", "device_id": "1572", "numa_node": 1,
            "physfn": None, "programming_model": "fixed", "function": None,
            "sriov": {"totalvfs": 64, "numvfs": numvfs, "vfs": []}, "units": []}


def qat_record(numvfs=16, addr=QAT_ADDR):
    return {"address": addr, "family": "qat", "vendor_id": "8086", "device_id": "37c8", "numa_node": 0,
            "physfn": None, "programming_model": "fixed", "function": None,
            "sriov": {"totalvfs": 16, "numvfs": numvfs, "vfs": []}, "units": []}


def discovery(host, records):
    return {"schema_version": 1, "host": {"hostname": host}, "accelerators": records}


class Ended(Exception):
    def __init__(self, kind, result):
        Exception.__init__(self, kind)
        self.kind = kind
        self.result = result


def ansible_playbook(play, *options):
    """The command line of an ansible-playbook run of ``play`` (the one beside this Python) on localhost, connection
    local, with ``options``."""
    return [os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + list(options) + [
        "-i", "localhost,", "-c", "local", play]


def playbook_env(**extra):
    """The environment of a test's ansible-playbook run: this checkout's collection, no colour, warnings or syslog
    audit lines, and the modules on ``ACCELOPS_MODULE_PYTHON`` (tools/gates.sh sets the modules' virtualenv, the
    platform's Python, as on a real host; the integration targets run there too), else on this Python."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collection_import_root(), ANSIBLE_NOCOLOR="1",
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0", ACCELOPS_AUDIT_SYSLOG="0",
               ANSIBLE_PYTHON_INTERPRETER=os.environ.get("ACCELOPS_MODULE_PYTHON") or sys.executable)
    env.update(extra)
    return env


def patch_exits(monkeypatch):
    def exit_json(self, **kw):
        raise Ended("exit", kw)

    def fail_json(self, msg, **kw):
        kw["msg"] = msg
        raise Ended("fail", kw)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setenv("ACCELOPS_AUDIT_SYSLOG", "0")


class Outcome(object):
    """How one in-process module run ended: ``kind`` exit, fail or traceback (any other exception)."""

    def __init__(self, kind, result, tb=None):
        self.kind, self.result, self.tb = kind, result, tb

    @property
    def msg(self):
        return (self.result or {}).get("msg", "")

    def __repr__(self):
        return "Outcome(%s, %r)" % (self.kind, self.tb or self.result)


def run_module(main, args, check=False, diff=False):
    """Run ``main`` in-process (patch_exits must be active) and return an :class:`Outcome`."""
    a = dict(args)
    a["_ansible_check_mode"] = check
    a["_ansible_diff"] = diff
    with patch_module_args(a):
        try:
            main()
        except Ended as e:
            return Outcome(e.kind, e.result)
        except SystemExit as e:  # AnsibleModule exits on its own for some argument errors
            return Outcome("traceback", None, "SystemExit(%r) without exit_json/fail_json" % (e.code,))
        except Exception:  # pylint: disable=broad-except
            return Outcome("traceback", None, traceback.format_exc())
    return Outcome("traceback", None, "main() returned without exit_json or fail_json")


INVENTORY_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


def tree_snapshot(placement, root_uuid):
    """Everything Placement holds for the tree of ``root_uuid``, read over plain HTTP (not through the code
    under test): ``{name: {uuid, parent, traits, inventories}}``, plus the total number of providers."""
    out = {}
    for p in placement.providers("?in_tree=" + root_uuid):
        invs = placement.inventories(p["uuid"])
        out[p["name"]] = {
            "uuid": p["uuid"], "parent": p.get("parent_provider_uuid"), "traits": placement.traits(p["uuid"]),
            "inventories": dict((rc, dict((k, inv[k]) for k in INVENTORY_FIELDS)) for rc, inv in invs.items())}
    return out, len(placement.providers())


_UUID = re.compile(r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}")


def request_kind(method, path):
    """The kind of an HTTP request: its method and path with uuids, names (trait, resource class, node) and
    query values made generic. Two requests of one kind take the same path through the client code (the same
    retry rule, the same handling of a lost answer); they differ only in the object they name."""
    base, _sep, query = path.partition("?")
    base = _UUID.sub("UUID", base)
    base = re.sub(r"/(traits|resource_classes)/[^/]+", r"/\1/NAME", base)
    base = re.sub(r"/nodes/(?!UUID)[^/]+", "/nodes/NAME", base)
    keys = sorted(set(kv.partition("=")[0] for kv in query.split("&") if kv))
    return method, base, tuple(keys)


def steady_log(proxy_log):
    """The (method, path) of each request of a fault-free run from a FaultProxy log, a request repeated right
    after itself counted once: on a loaded machine a fault-free request can time out and be retried, and that
    extra request is not part of the run (a later run would not reach the position it adds)."""
    out = []
    for entry in proxy_log:
        req = (entry[1], entry[2])
        if not out or out[-1] != req:
            out.append(req)
    return out


def gate_positions(log):
    """``log``: the (method, path) of each request of a fault-free run. The 1-based positions a gate sweep
    faults: the first request of each kind (:func:`request_kind`) and the last request of the run (everything
    before it landed: the most to recover from). The FULL modes fault every position instead."""
    seen, out = set(), {len(log)}
    for n, (method, path) in enumerate(log, 1):
        k = request_kind(method, path)
        if k not in seen:
            seen.add(k)
            out.add(n)
    return sorted(out)
