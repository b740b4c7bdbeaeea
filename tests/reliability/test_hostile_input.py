# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Hostile input (docs/reliability.md, "Hostile input"): hypothesis over every module's argument spec, over the
filters' inputs (the declaration among them) and over sysfs contents.

Every module found in plugins/modules runs in-process from a baseline that changes nothing (host modules
on a rendered lab-all simulator tree, OpenStack modules against a closed port); one option at a time gets
a hostile value (wrong type, garbage, control characters, lone surrogates, infinities, numbers just outside
the option's declared range or far beyond it, path traversal, over-long paths, lists of hostile elements and
of dicts with hostile suboptions), or an unknown key is added. Each run must end in exit_json or fail_json,
never a traceback; a failure caused by validation must name the option; no run may write to sysfs (counted
at Sysfs.write) or change any file of the sandbox. Every filter found in plugins/filter gets its baseline
input with one node anywhere in it replaced, dropped or added; it must return or raise AnsibleFilterError
with a message that starts with the filter's name. Every controller action (plugins/action) gets its baseline task
arguments with one node replaced, dropped or added (an unknown option among them): the task returns or fails with
a message naming the option, never an exception, and a no_log value never comes back in its result.
Deterministic (derandomize) so CI sees the same inputs every run. The scale is set by environment variables
(per module, per filter, per action, sysfs trees): RELIABILITY_EXAMPLES (gate 40), RELIABILITY_FILTER_EXAMPLES
(gate 30), RELIABILITY_ACTION_EXAMPLES (gate 30), RELIABILITY_SYSFS_EXAMPLES (gate 60).
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import math
import os
import re
import shutil
import socket
import tempfile
import traceback

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers import patch_exits, run_module

import accelsim
from accelsim.faults import Faults
from accelsim.store import find_store
from ansible.errors import AnsibleFilterError
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args
from ansible_collections.accelops.lifecycle.plugins.module_utils import _module, _sysfs
from ansible_collections.accelops.lifecycle.tests.unit.plugins.action.controller_run import action_class, run_action

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES_DIR = os.path.join(TOP, "plugins", "modules")
EXAMPLES = int(os.environ.get("RELIABILITY_EXAMPLES", "40"))
CONNECTION = ("cloud", "auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
              "api_timeout", "interface", "wait", "timeout")
NIC_PF, L40, FPGA = "0000:d8:00.0", "0000:3b:00.0", "0000:5e:00.0"
FIGURES_KEY = "hostile_module_inputs"


def module_names():
    """Every module that runs on a host (has main()); a controller action's module file holds its documentation only
    (its action plugin runs it, swept by test_hostile_action_arguments). nvidia_mig has both: an action that reads the
    mig-parted file on the controller, and the module that runs on the host."""
    return sorted(f[:-3] for f in os.listdir(MODULES_DIR) if f.endswith(".py") and not f.startswith("_")
                  and hasattr(load(f[:-3]), "main"))


def load(name):
    return importlib.import_module("ansible_collections.accelops.lifecycle.plugins.modules." + name)


class _Captured(Exception):
    pass


def argument_spec(name):
    """The module's argument spec, declared ranges and path-like str options, captured when it builds its
    AccelopsModule."""
    mod = load(name)
    seen = {}
    orig = _module.AccelopsModule.__init__

    def capture(self, argument_spec, ranges=None, paths=(), **kwargs):
        seen.update(spec=argument_spec, ranges=dict(ranges or {}), paths=tuple(paths))
        raise _Captured()
    _module.AccelopsModule.__init__ = capture
    try:
        with patch_module_args({}):
            try:
                mod.main()
            except _Captured:
                pass
    finally:
        _module.AccelopsModule.__init__ = orig
    return seen["spec"], seen["ranges"], seen["paths"]


def _closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def sandbox():
    """A rendered lab-all host (plain tree) in a temporary directory, and a no-op baseline per module."""
    d = tempfile.mkdtemp(prefix="accelops-hostile-")
    tree = os.path.join(d, "host")
    accelsim.render_tree(accelsim.load_lab("lab-all"), tree)
    lab = accelsim.load_lab("fpga-opae")
    fpga = [f for f in lab["functions"] if f.get("fpga")][0]["fpga"]
    gbs = os.path.join(d, "loaded.gbs")
    accelsim.make_gbs(gbs, fpga["interface_id"], fpga["afu_id"])
    with open(gbs, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    numvfs = open(os.path.join(tree, "sys/bus/pci/devices", NIC_PF, "sriov_numvfs")).read().strip()
    # lab-all has no MIG GPU: the H100 lab (MIG on, 3g.40gb + 2 x 1g.10gb) beside it
    mig_tree = os.path.join(d, "mig")
    accelsim.render_tree(accelsim.load_lab("gpu-mig-h100"), mig_tree)
    endpoint = "http://127.0.0.1:%d" % _closed_port()
    cloud = {"auth_type": "admin_token", "auth": {"endpoint": endpoint, "token": "t"},
             "placement_endpoint_override": endpoint, "accelerator_endpoint_override": endpoint,
             "baremetal_endpoint_override": endpoint, "api_timeout": 2}
    base = {
        "accelerator_info": {"root": tree, "nvidia_smi": "never"},
        "sriov_vfs": {"root": tree, "address": NIC_PF, "num_vfs": int(numvfs), "persistent": False},
        "vgpu": {"root": tree, "addresses": [L40], "count": 0, "persistent": False},
        "fpga_program": {"root": tree, "address": FPGA, "bitstream": gbs, "sha256": sha},
        "nvidia_mig": {"root": mig_tree, "address": "0000:19:00.0", "mode": "enabled",
                       "layout": "3g.40gb + 2 x 1g.10gb", "persistent": False},
        "accelerator_converge": {"root": tree, "lock_dir": os.path.join(d, "lock"), "persistent": False,
                                 "functions": [{"name": "qat", "match": {"family": "qat"}, "passthrough": {}}]},
        "placement_provider_tree": {"cloud": cloud, "discovery": {"host": {"hostname": "h"}, "accelerators": []},
                                    "request_retries": 0},
        "placement_provider_info": {"cloud": cloud, "hosts": ["h"], "request_retries": 0},
        # no retries against the closed port (each input would wait out the retry pauses, ~7.5 s by default)
        "device_profile": {"cloud": cloud, "name": "p1", "groups": [{"resources:FPGA": "1"}], "request_retries": 0},
        "device_profile_info": {"cloud": cloud, "request_retries": 0},
        "baremetal_node_accelerators": {"cloud": cloud, "node": "n1", "lock_retries": 0, "request_retries": 0},
        "placement_provider_drain": {"cloud": cloud, "providers": [{"uuid": "2f1e0a4c-5b6d-4e7f-8a9b-0c1d2e3f4a5b"}],
                                     "state": "released", "request_retries": 0},
        "placement_aggregate_info": {"cloud": cloud, "aggregates": ["2f1e0a4c-5b6d-4e7f-8a9b-0c1d2e3f4a5b"],
                                     "request_retries": 0},
        # the simulated kernel offers no reset for the NIC: kept, nothing written
        "one_time_use_reset": {"root": tree, "devices": [NIC_PF]},
        "placement_one_time_use": {"cloud": cloud, "host": "h", "request_retries": 0},
    }
    # the connection options themselves are tried without a cloud dict (beside one they are refused as a clash)
    connection = {"auth_type": "admin_token", "auth": {"endpoint": endpoint, "token": "t"}, "api_timeout": 2}
    yield {"dir": d, "tree": tree, "trees": [tree, mig_tree], "base": base, "connection": connection}
    shutil.rmtree(d, ignore_errors=True)


def tool_changes(trees):
    """How many runs of the simulator's vendor tool fakes (nvidia-smi, mdevctl, sriov-manage, ...) changed the
    hosts at ``trees`` so far: a change made through a tool writes nothing to sysfs itself."""
    return sum(len(Faults(find_store(root=t).dir).tool_changes()) for t in trees)


def tree_state(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            st_ = os.lstat(p)
            out[p] = (st_.st_mode, st_.st_size, st_.st_mtime_ns)
    return out


# -- hostile values -----------------------------------------------------------------------------------------
SPECIAL = ["", " ", "\x00", "\n", "-1", "../../../../etc/passwd", "/etc/shadow", "..", "%s%s%n", "{{ 7*7 }}",
           "$(id)", "`id`", "; rm -rf /", "\u202e\u0000x", "\udcff", "/tmp/\udcff", "A" * 100000, "0000:zz:00.0",
           "0000:d8:00.0/../..", "CUSTOM_" + "X" * 300, "null", "None", "[]", "{}", "inf", "-Infinity", "nan",
           "1e99999999", ".inf"]
garbage_text = st.one_of(st.sampled_from(SPECIAL), st.text(max_size=30),
                         st.binary(max_size=16).map(lambda b: b.decode("latin-1")),
                         st.binary(max_size=16).map(lambda b: b.decode("utf-8", "surrogateescape")))
huge_int = st.one_of(st.integers(min_value=2 ** 31), st.integers(max_value=-1))
# what ansible-core cannot convert to an int by itself (OverflowError, or minutes of CPU)
NOT_FINITE = st.sampled_from([float("inf"), float("-inf"), float("nan"), "inf", "-inf", "Infinity", "-Infinity",
                              "1e99999999", "-1e400000", " 1E+50000 "])
containers = st.one_of(st.lists(garbage_text, max_size=3), st.dictionaries(garbage_text, garbage_text, max_size=3))


def _not_int(s):
    try:
        int(s)
        return False
    except (ValueError, TypeError):
        return True


def _not_integral(f):
    return math.isnan(f) or math.isinf(f) or f != int(f)


def _outside(bounds):
    """Whole numbers just outside a declared range and far outside it."""
    lo, hi = bounds[0], bounds[1]
    edges = list((lo - 1, lo - 10 ** 6) if lo is not None else ()) + list((hi + 1, hi * 10 ** 6 + 1)
                                                                          if hi is not None else ())
    return st.sampled_from(edges) if edges else huge_int


def path_values(sandbox_dir):
    parts = st.sampled_from(["..", ".", "sys", "x", "\x00", "a" * 256, "b" * 255, "*", "", "\udcff", "\u202e"])
    inside = st.lists(parts, max_size=6).map(lambda p: os.path.join(sandbox_dir, *p))
    too_long = st.integers(2, 30).map(lambda n: os.path.join(sandbox_dir, *(["c" * 200] * n)))
    return st.one_of(inside, too_long, garbage_text, containers, huge_int)


def hostile(spec_entry, sandbox_dir, bounds=(None, None), path_like=False):
    t = spec_entry.get("type", "str")
    if t == "int":
        return st.one_of(garbage_text.filter(_not_int), huge_int, _outside(bounds), NOT_FINITE, st.booleans(),
                         st.floats().filter(_not_integral), containers)
    if t == "float":
        return st.one_of(garbage_text, st.sampled_from([float("nan"), float("inf"), float("-inf"), -1.0, 1e300]),
                         _outside(bounds), NOT_FINITE, st.booleans(), containers)
    if t == "bool":
        return st.one_of(garbage_text.filter(lambda s: s.lower() not in basic.BOOLEANS), st.integers(2, 10 ** 6),
                         containers)
    if t == "path" or path_like:
        return path_values(sandbox_dir)
    if t in ("list", "dict"):
        el = spec_entry.get("elements")
        if spec_entry.get("options"):
            # dicts with the suboptions' keys, each a hostile value of its own type
            subs = spec_entry["options"]
            element = st.fixed_dictionaries({}, optional=dict(
                (k, st.deferred(lambda e=e: hostile(e, sandbox_dir))) for k, e in subs.items()))
            return st.one_of(st.lists(element, min_size=1, max_size=3),
                             st.lists(st.one_of(garbage_text, huge_int, containers, element), max_size=3), garbage_text)
        if el in ("int", "float"):
            elements = st.one_of(NOT_FINITE, huge_int, garbage_text)
        else:
            elements = st.one_of(garbage_text, huge_int, containers, NOT_FINITE)
        return st.one_of(garbage_text, huge_int, st.lists(elements, max_size=4),
                         st.dictionaries(garbage_text, st.one_of(garbage_text, containers), max_size=3)
                         if t == "dict" or el == "dict" else garbage_text)
    # str and raw
    return st.one_of(garbage_text, huge_int, NOT_FINITE, containers)


def safe_path_value(name, value, sandbox_dir):
    """Never point a host module at the real host: a path option must resolve inside the sandbox or not
    exist at all outside it."""
    if not isinstance(value, str) or "\x00" in value:
        return True
    if not os.path.isabs(value):
        return True
    try:
        real = os.path.realpath(value)
    except (OSError, ValueError):
        return True
    return real.startswith(sandbox_dir + os.sep) or real == sandbox_dir


def names_option(msg, option, spec_entry):
    names = [option] + list(spec_entry.get("aliases") or [])
    return any(n in msg for n in names)


# ansible-core's messages for a bad element of a list of dicts with suboptions, before the module runs
ANSIBLE_UNNAMED = ("dictionary requested, could not parse JSON or key=value",)
CONNECTION_WORDS = ("connect", "Connection", "no answer", "Unable to establish", "could not build", "unreachable",
                    "refused", "OpenStack", "Placement GET", "Cyborg", "Ironic")


def as_on_a_managed_host(monkeypatch):
    """ansible-core checks that the module's JSON input is valid UTF-8 only where ansible.constants is imported
    (the controller; here, once a filter or ansible.errors is loaded). A module process on a managed host, and
    AnsiballZ on the controller too, does not load it, so a lone surrogate reaches the module: run so here."""
    from ansible.module_utils._internal._json import _profiles
    if hasattr(_profiles, "_string_encoding_check_enabled"):
        monkeypatch.setattr(_profiles, "_string_encoding_check_enabled", lambda: False)


def test_the_sweep_counts_a_change_made_through_a_vendor_tool(tmp_path, monkeypatch):
    """The sweep's tool counter is live: nvidia_mig changing the H100 lab's layout (through nvidia-smi alone, no
    sysfs write) counts."""
    patch_exits(monkeypatch)
    tree = str(tmp_path / "mig")
    accelsim.render_tree(accelsim.load_lab("gpu-mig-h100"), tree)
    before = tool_changes([tree])
    args = {"root": tree, "address": "0000:19:00.0", "mode": "enabled", "layout": "7 x 1g.10gb", "persistent": False}
    out = run_module(load("nvidia_mig").main, args)
    assert out.kind == "exit" and out.result["changed"], out
    assert tool_changes([tree]) > before


@pytest.mark.parametrize("name", module_names())
def test_hostile_module_arguments(name, sandbox, monkeypatch, figures):
    patch_exits(monkeypatch)
    as_on_a_managed_host(monkeypatch)
    writes = []
    orig_write = _sysfs.Sysfs.write

    def counting(self, path, value):
        writes.append((path, value))
        return orig_write(self, path, value)
    monkeypatch.setattr(_sysfs.Sysfs, "write", counting)
    spec, ranges, paths = argument_spec(name)
    base = sandbox["base"].get(name)
    assert base is not None, "no baseline for the new module %s: add one to the sandbox fixture" % name
    main = load(name).main
    before = tree_state(sandbox["dir"])
    tools_before = tool_changes(sandbox["trees"])
    first = run_module(main, base)
    assert first.kind != "traceback", first.tb
    assert not writes, "the baseline of %s is not a no-op: %s" % (name, writes)
    assert tool_changes(sandbox["trees"]) == tools_before, "the baseline of %s changed the host through a tool" % name
    options = sorted(spec)
    lock_dirs = set()   # accelerator_converge's accepted lock directories: made (with their parents) on every run
    problems, stats = [], {"inputs": 0, "failed_naming_option": 0, "failed_later": 0, "accepted": 0,
                           "tracebacks": 0, "writes": 0, "tool_changes": 0, "core_message_without_option": 0,
                           "failed_without_option": 0, "files_changed": 0}

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        option = data.draw(st.sampled_from(options + ["<unknown>"]), label="option")
        args = dict(base)
        if option in CONNECTION and option != "cloud":
            args.pop("cloud", None)
            args.update(sandbox["connection"])
        if option == "<unknown>":
            key = data.draw(st.from_regex(r"\A[a-z_]{1,12}\Z").filter(lambda k: k not in spec), label="key")
            value = data.draw(garbage_text, label="value")
            args[key] = value
            shown = key
        else:
            path_like = option in paths
            value = data.draw(hostile(spec[option], sandbox["dir"], ranges.get(option, (None, None)), path_like),
                              label="value")
            if spec[option].get("type") == "path" or path_like or option == "cloud":
                assume(safe_path_value(option, value, sandbox["dir"]))
            args[option] = value
            shown = option
            if option == "lock_dir" and isinstance(value, str) and os.path.isabs(value) and "\x00" not in value:
                lock_dirs.add(os.path.normpath(value))
        n, n_tools = len(writes), tool_changes(sandbox["trees"])
        out = run_module(main, args)
        stats["inputs"] += 1
        where = "%s %s=%r" % (name, shown, value if len(repr(value)) < 200 else repr(value)[:200] + "...")
        if len(writes) != n:
            stats["writes"] += 1
            problems.append("%s: wrote %s" % (where, writes[n:]))
        if tool_changes(sandbox["trees"]) != n_tools:
            stats["tool_changes"] += 1
            problems.append("%s: changed the host through a vendor tool" % where)
        if out.kind == "traceback":
            stats["tracebacks"] += 1
            problems.append("%s: traceback\n%s" % (where, out.tb))
        elif out.kind == "exit":
            stats["accepted"] += 1
        elif names_option(out.msg, shown, spec.get(shown, {})):
            stats["failed_naming_option"] += 1
        elif out.msg.startswith(ANSIBLE_UNNAMED):
            # ansible-core's own check of list elements with suboptions; it does not name the option
            # (reported in docs/reliability.md; the module never sees the value)
            stats["core_message_without_option"] += 1
        elif "cloud" in spec and any(w in out.msg for w in CONNECTION_WORDS):
            stats["failed_later"] += 1   # passed validation, then the (closed) endpoint refused
        elif option == "root" or spec.get(shown, {}).get("type") == "path" or option in paths:
            # a path that is not what the module needs: the message must say what is wrong with it
            stats["failed_later"] += 1
            if not out.msg.strip():
                problems.append("%s: empty failure message" % where)
        else:
            stats["failed_without_option"] += 1
            problems.append("%s: the failure does not name the option: %s" % (where, out.msg[:300]))
    check()
    after = tree_state(sandbox["dir"])
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if name == "accelerator_converge":
        # the host lock's directory (made 0700 with its missing parents), its file and owner record are the
        # module's own, made on every run, at the baseline's lock_dir and at every lock_dir the sweep tried
        changed = [p for p in changed if not re.search(r"/(lock|run/accelops)(/converge\.(lock|owner))?$", p)
                   and not _in_lock_dir(p, lock_dirs)]
        stats["lock_dirs_made"] = len([p for p in lock_dirs if p.startswith(sandbox["dir"] + os.sep)
                                       and os.path.isdir(p)])
    stats["files_changed"] = len(changed)
    figures.setdefault(FIGURES_KEY, {})[name] = stats
    if changed:
        problems.insert(0, "%s changed the sandbox: %s" % (name, changed[:10]))
    assert not problems, "\n".join(problems[:10])


def _in_lock_dir(path, lock_dirs):
    """A lock directory the sweep named, one of the parents made for it, or the lock's own files in it."""
    if os.path.basename(path) in ("converge.lock", "converge.owner", "converge.journal"):
        path = os.path.dirname(path)
    return any(d == path or d.startswith(path + os.sep) for d in lock_dirs)


# -- hostile filter inputs (the declaration among them) ------------------------------------------------------
FILTERS_DIR = os.path.join(TOP, "plugins", "filter")
FILTER_EXAMPLES = int(os.environ.get("RELIABILITY_FILTER_EXAMPLES", "30"))
OPAE_AFU = "d8424dc4a4a93c849c1ad7c6d7b3c2a7"     # what lab-all's PAC A10 (0000:5e:00.0) carries
DECLARATION = [
    {"name": "gzip", "match": {"address": FPGA},
     "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32, "function_id": OPAE_AFU}},
    {"name": "t4-2q", "match": {"family": "gpu", "device_id": "1eb8"}, "vgpu": {"type": "GRID T4-2Q", "count": 2}},
    {"name": "x710-vf", "match": {"family": "nic", "count": 1},
     "vfs": {"count": 4, "driver": "vfio-pci", "vfs": [{"index": 0, "vlan": 10, "trust": True}]},
     "placement": {"traits": ["CUSTOM_FAST_NET"]}, "nova": {"alias": "x710-vf", "numa_policy": "preferred"}},
    {"name": "qat", "match": {"family": "qat"}, "passthrough": {"driver": "vfio-pci"}},
]
GZIP_PROFILE = {"name": "gzip", "groups": [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}]}
LEAF = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), huge_int, garbage_text,
                 st.sampled_from([2 ** 64, -2 ** 63, float("nan"), float("inf"), float("-inf"), 1e308, -0.0, 0.5]))
ANY = st.recursive(LEAF, lambda c: st.one_of(st.lists(c, max_size=4), st.tuples(c, c),
                                             st.dictionaries(st.one_of(garbage_text, st.integers(), st.none()), c,
                                                             max_size=4)), max_leaves=10)


# Filters in which the sweep at 1,000 inputs each found tracebacks that are not fixed yet: a run that finds them
# again is reported as an expected failure, never as a pass; a filter not listed here must show none. Empty since
# every filter checks its input's shape (issue 21).
OPEN_FILTER_FINDINGS = {}


def _fleet_report_model(data):
    """The fleet report's model (the fleet_report action's decide() builds it), swept as the filter it was: its
    refusals are FleetReportError, which the action turns into the task's message."""
    from ansible_collections.accelops.lifecycle.plugins.plugin_utils import _fleet_report  # pylint: disable=import-outside-toplevel
    try:
        return _fleet_report.build(data)
    except _fleet_report.FleetReportError as e:
        raise AnsibleFilterError(str(e))


def filter_functions():
    out = {"fleet_report": _fleet_report_model}
    for f in sorted(os.listdir(FILTERS_DIR)):
        if f.endswith(".py") and not f.startswith("_"):
            mod = importlib.import_module("ansible_collections.accelops.lifecycle.plugins.filter." + f[:-3])
            out.update(mod.FilterModule().filters())
    return out


@pytest.fixture(scope="module")
def filter_inputs(sandbox):
    """Each filter's baseline input as {"args": [...], "kwargs": {...}}: the discovery of the lab-all host and a
    declaration that resolves on it."""
    from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_info
    with pytest.MonkeyPatch.context() as mp:
        patch_exits(mp)
        out = run_module(accelerator_info.main, {"root": sandbox["tree"], "nvidia_smi": "never"})
    assert out.kind == "exit", out
    disc = dict((k, out.result[k]) for k in ("schema_version", "host", "accelerators") if k in out.result)
    return {
        "nova_device_config": {"args": [disc, DECLARATION],
                               "kwargs": {"report_in_placement": True, "cyborg_families": ["fpga"],
                                          "physical_networks": {"x710-vf": "physnet1"}, "host": "h1"}},
        "hostdev_xml": {"args": [disc], "kwargs": {"managed": "auto"}},
        "hostdev_units": {"args": [disc], "kwargs": {"families": ["nic", "gpu"], "assignable_only": True}},
        "accelerator_summary": {"args": [disc["accelerators"]], "kwargs": {}},
        "fleet_report": {"args": [{"names": ["h1"], "hosts": [{"name": "h1", "placement_host": "h1",
                                                               "discovery": disc, "functions": DECLARATION}],
                                   "placement": [{"changed": False, "providers": []}],
                                   "profiles": [dict(GZIP_PROFILE, candidates={"count": 0, "hosts": [],
                                                                               "providers": []},
                                                     satisfiable=False)],
                                   "generated": "2026-11-24 20:00:00 UTC"}], "kwargs": {}},
    }


def mutate(data, value, depth):
    """``value`` with one node (``depth`` levels down at most) replaced by a hostile one, dropped, or a hostile
    entry added; returns (new value, where)."""
    if depth and isinstance(value, (dict, list)) and value:
        op = data.draw(st.sampled_from(["into", "into", "into", "drop", "add"]))
        if isinstance(value, dict):
            keys = list(value)
            key = keys[data.draw(st.integers(0, len(keys) - 1))]
            out = dict(value)
            if op == "drop":
                del out[key]
                return out, "drop %r" % (key,)
            if op == "add":
                new = data.draw(st.one_of(garbage_text, st.integers(), st.none()))
                out[new] = data.draw(ANY)
                return out, "add %r=%r" % (new, out[new])
            out[key], where = mutate(data, value[key], depth - 1)
            return out, "%r/%s" % (key, where)
        i = data.draw(st.integers(0, len(value) - 1))
        out = list(value)
        if op == "drop":
            del out[i]
            return out, "drop [%d]" % i
        if op == "add":
            out.insert(i, data.draw(ANY))
            return out, "insert [%d]=%r" % (i, out[i])
        out[i], where = mutate(data, value[i], depth - 1)
        return out, "[%d]/%s" % (i, where)
    new = data.draw(ANY)
    return new, "= %r" % (new,)


@pytest.mark.parametrize("name", sorted(filter_functions()))
def test_hostile_filter_inputs(name, filter_inputs, figures):
    """One node of the filter's input (the declaration, the discovery, the options) replaced by a hostile value,
    dropped, or a hostile entry added: the filter returns or raises AnsibleFilterError naming itself, never
    another exception."""
    fn = filter_functions()[name]
    base = filter_inputs.get(name)
    assert base is not None, "no baseline input for the new filter %s: add one to filter_inputs" % name
    fn(*copy.deepcopy(base["args"]), **copy.deepcopy(base["kwargs"]))   # the baseline itself is accepted
    stats = {"inputs": 0, "returned": 0, "failed_naming_filter": 0, "failed_without_filter": 0, "tracebacks": 0}
    problems = []

    @settings(max_examples=FILTER_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        # one argument (positional or keyword) changed inside; Jinja2 itself refuses a missing or unknown one
        slots = [("args", i) for i in range(len(base["args"]))] + [("kwargs", k) for k in sorted(base["kwargs"])]
        kind, slot = slots[data.draw(st.integers(0, len(slots) - 1), label="argument")]
        args, kwargs = copy.deepcopy(base["args"]), copy.deepcopy(base["kwargs"])
        target = args if kind == "args" else kwargs
        target[slot], where = mutate(data, target[slot], data.draw(st.integers(0, 9), label="depth"))
        where = "%s[%r] %s" % (kind, slot, where)
        stats["inputs"] += 1
        try:
            fn(*args, **kwargs)
            stats["returned"] += 1
        except AnsibleFilterError as e:
            if str(e).startswith(name):
                stats["failed_naming_filter"] += 1
            else:
                stats["failed_without_filter"] += 1
                problems.append("%s %s: the message does not start with the filter's name: %s" % (name, where[:300], e))
        except Exception:  # pylint: disable=broad-except
            stats["tracebacks"] += 1
            problems.append("%s %s: traceback\n%s" % (name, where[:300], traceback.format_exc()))
    check()
    figures.setdefault("hostile_filter_inputs", {})[name] = stats
    if problems and name in OPEN_FILTER_FINDINGS:
        # reported, not passed: see docs/reliability.md, "Still open"
        pytest.xfail("%s: %d tracebacks of %d inputs (open: %s); first: %s"
                     % (name, stats["tracebacks"], stats["inputs"], OPEN_FILTER_FINDINGS[name], problems[0][:500]))
    assert not problems, "\n".join(problems[:10])


# -- hostile controller-action arguments ---------------------------------------------------------------------
ACTIONS_DIR = os.path.join(TOP, "plugins", "action")
ACTION_EXAMPLES = int(os.environ.get("RELIABILITY_ACTION_EXAMPLES", "30"))
SECRET = "hostile-sweep-secret-4f2a"   # a no_log option's value: it must never come back in a result
AFU_LZ4 = "aaaabbbbccccddddeeeeffff00001111"
POOL_FUNCTIONS = [DECLARATION[0], {"name": "lz4", "match": {"family": "fpga"},
                                   "fpga": {"bitstream": "/srv/lz4.gbs", "sha256": "cd" * 32, "function_id": AFU_LZ4}}]


def action_names():
    """Every controller action (the nvidia_mig action only reads a file on the host and hands the module its
    mapping; the module is swept above)."""
    from ansible_collections.accelops.lifecycle.plugins.plugin_utils._action import ControllerAction  # pylint: disable=import-outside-toplevel
    return sorted(f[:-3] for f in os.listdir(ACTIONS_DIR) if f.endswith(".py") and not f.startswith("_")
                  and issubclass(action_class(f[:-3]), ControllerAction))


def _fpga_provider(host, rec, used=0):
    loaded = (rec.get("function") or {}).get("id")
    traits = ["CUSTOM_OWNER_ACCELOPS"] + (["CUSTOM_FUNCTION_GZIP"] if loaded == OPAE_AFU else [])
    name = "%s_%s" % (host, rec["address"])
    return {"name": name, "uuid": "uuid-" + name, "generation": 3, "traits": traits,
            "inventories": {"FPGA": {"total": 1, "reserved": 0}}, "usages": {"FPGA": used},
            "allocations": {"c-1": {"resources": {"FPGA": used}}} if used else {}, "in_use": bool(used),
            "drained": False}


def _batch_inputs(settings, disc):
    """accelerator_host_batch's inputs at each step for one host whose NIC gets VFs (the role's records)."""
    card = {"address": NIC_PF, "function": "x710-vf", "kind": "vfs", "status": "todo", "in_use_by": [],
            "reason": "named by address", "loaded": None, "module": "accelops.lifecycle.sriov_vfs"}
    todo = {NIC_PF: {"failed": False, "changed": True, "refused_in_use": False, "msg": "", "steps": ["create 4 VFs"]}}
    plan = {"changed": True, "cards": [card], "planned": todo, "problems": [], "drift": [], "discovery": disc,
            "function_names": {}, "overrides": {NIC_PF: {"traits": ["CUSTOM_FUNCTION_X710_VF"]}}, "error": None}
    applied = dict(plan, cards=[dict(card, status="ok")], changed=True, verify={NIC_PF: True}, kept_drained=[],
                   applied={NIC_PF: {"failed": False, "applied": ["create 4 VFs"], "state": None}})
    read = {"results": [{"providers": [{"name": "cn-h1_" + NIC_PF, "in_use": False, "usages": {}}]}]}
    drain = {"changed": True, "by_host": {"cn-h1": {"summary": {"updated": 1}, "drained": []}}}
    base = {"settings": {"h1": settings}, "plans": {"h1": plan}}
    return [dict(base, step="plan"), dict(base, step="drain", placement_read=read),
            dict(base, step="apply", placement_read=read, placement_drain=drain),
            dict(base, step="report", placement_read=read, placement_drain=drain, applied={"h1": applied}),
            dict(base, step="summary", placement_read=read, placement_drain=drain, applied={"h1": applied},
                 placement_report={"changed": True, "results": []})]


@pytest.fixture(scope="module")
def action_inputs(sandbox, filter_inputs):
    """Each controller action's baselines (task arguments the action accepts): the lab-all host's discovery, the
    declaration, and records of the shapes the roles hand them."""
    disc = filter_inputs["hostdev_xml"]["args"][0]
    settings_args = {"host": "h1", "root": sandbox["tree"], "placement_host": "cn-h1", "functions": DECLARATION,
                     "placement_endpoint": "http://127.0.0.1:1", "placement_token": SECRET}
    settings = run_action("accelerator_host_settings", copy.deepcopy(settings_args))
    assert not settings.get("failed"), settings
    settings = dict((k, v) for k, v in settings.items() if k not in ("changed", "failed", "_ansible_no_log"))
    fpga = [r for r in disc["accelerators"] if r["family"] == "fpga"][0]
    hosts = {"h1": {"placement_host": "h1", "discovery": disc}, "h2": {"placement_host": "h2", "discovery": disc}}
    providers = [_fpga_provider("h1", fpga, used=1), _fpga_provider("h2", fpga)]
    pool_args = {"functions": POOL_FUNCTIONS, "hosts": hosts, "providers": providers,
                 "pools": [{"function": "lz4", "hosts": ["h1", "h2"], "min_free": 1}]}
    plan = run_action("pool_plan", copy.deepcopy(pool_args))
    assert not plan.get("failed") and plan["plan"]["actions"], plan
    plan = plan["plan"]
    drain = {"providers": [{"name": "h2_" + fpga["address"], "uuid": "uuid-h2_" + fpga["address"],
                            "card": "h2 " + fpga["address"], "action": "drained", "reason": None}]}
    converge = {"h2": {"changed": [fpga["address"]], "failed": [], "error": None,
                       "placement": {"undrained": [fpga["address"]], "kept_drained": []}}}
    fleet = filter_inputs["fleet_report"]["args"][0]
    return {
        "resolve_functions": [{"discovery": disc, "functions": DECLARATION}],
        "accelerator_host_settings": [settings_args],
        "accelerator_host_batch": _batch_inputs(settings, disc),
        "fleet_report": [fleet],
        "pool_plan": [pool_args],
        "pool_converge": [{"plan": plan, "functions": POOL_FUNCTIONS, "drain": drain}],
        "pool_report": [{"plan": plan, "hosts": hosts, "providers": providers, "drain": drain, "converge": converge,
                         "apply": True}],
        "provision_plan": [{"profiles": [GZIP_PROFILE],
                            "functions": {"gzip": {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32,
                                                   "function_id": OPAE_AFU}},
                            "hosts": {"h1": {"accelerators": disc["accelerators"]}}, "providers": providers}],
    }


@pytest.mark.parametrize("name", action_names())
def test_hostile_action_arguments(name, action_inputs, figures):
    """One node of a controller action's task arguments replaced by a hostile value, dropped, or a hostile entry
    added (an unknown option among them): the task returns or fails with a message naming the option, never an
    exception, and a no_log value never comes back in the result."""
    bases = action_inputs.get(name)
    assert bases, "no baseline arguments for the new action %s: add them to action_inputs" % name
    for base in bases:   # every baseline itself is accepted
        out = run_action(name, copy.deepcopy(base))
        assert not out.get("failed"), (name, base.get("step"), out.get("msg"))
    stats = {"inputs": 0, "returned": 0, "failed_naming_option": 0, "failed_without_option": 0, "tracebacks": 0,
             "secret_shown": 0}
    problems = []

    @settings(max_examples=ACTION_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        base = bases[data.draw(st.integers(0, len(bases) - 1), label="baseline")]
        options = sorted(base)
        option = data.draw(st.sampled_from(options + ["<unknown>"]), label="option")
        args = copy.deepcopy(base)
        if option == "<unknown>":
            option = data.draw(st.from_regex(r"\A[a-z_]{1,12}\Z").filter(lambda k: k not in base), label="key")
            args[option] = data.draw(ANY, label="value")
            where = "added %s=%r" % (option, args[option])
        elif data.draw(st.integers(0, 9), label="drop") == 0:
            del args[option]
            where = "dropped %s" % option
        else:
            args[option], where = mutate(data, args[option], data.draw(st.integers(0, 9), label="depth"))
            where = "%s %s" % (option, where)
        where = "%s (%s) %s" % (name, base.get("step", "-"), where[:300])
        stats["inputs"] += 1
        try:
            out = run_action(name, args)
        except Exception:  # pylint: disable=broad-except
            stats["tracebacks"] += 1
            problems.append("%s: traceback\n%s" % (where, traceback.format_exc()))
            return
        if SECRET in repr(out):
            stats["secret_shown"] += 1
            problems.append("%s: the no_log value came back in the result" % where)
        if not out.get("failed"):
            stats["returned"] += 1
        elif option in str(out.get("msg")):
            stats["failed_naming_option"] += 1
        else:
            stats["failed_without_option"] += 1
            problems.append("%s: the failure does not name the option: %s" % (where, str(out.get("msg"))[:300]))
    check()
    figures.setdefault("hostile_action_inputs", {})[name] = stats
    assert not problems, "\n".join(problems[:10])


# -- hostile sysfs contents -----------------------------------------------------------------------------------
SYSFS_EXAMPLES = int(os.environ.get("RELIABILITY_SYSFS_EXAMPLES", "60"))
MUTATIONS = ("garbage", "truncated", "enormous", "non_utf8", "empty", "symlink_loop", "dangling", "directory",
             "self_loop_dir", "fifo", "kernel_lookalike")


@pytest.fixture(scope="module")
def fuzz_tree():
    d = tempfile.mkdtemp(prefix="accelops-sysfs-fuzz-")
    tree = os.path.join(d, "host")
    accelsim.render_tree(accelsim.load_lab("lab-all"), tree)
    entries = []
    for sub in ("sys/devices", "sys/bus/pci", "sys/class", "sys/kernel/iommu_groups", "proc"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(tree, sub)):
            for n in filenames + [x for x in dirnames if os.path.islink(os.path.join(dirpath, x))]:
                p = os.path.join(dirpath, n)
                if os.path.islink(p) or os.path.isfile(p):
                    entries.append(p)
    yield tree, sorted(set(entries))
    shutil.rmtree(d, ignore_errors=True)


def _save(p):
    if os.path.islink(p):
        return ("link", os.readlink(p))
    with open(p, "rb") as f:
        return ("file", f.read())


def _remove(p):
    if os.path.islink(p) or os.path.isfile(p) or (os.path.lexists(p) and not os.path.isdir(p)):
        os.unlink(p)  # a file, a link, or a FIFO a mutation planted
    elif os.path.isdir(p):
        shutil.rmtree(p)


def _restore(p, saved):
    _remove(p)
    if saved[0] == "link":
        os.symlink(saved[1], p)
    else:
        with open(p, "wb") as f:
            f.write(saved[1])


def _mutate(p, kind, saved, blob):
    content = saved[1] if saved[0] == "file" else b"x\n"
    _remove(p)
    if kind == "garbage":
        data = blob
    elif kind == "truncated":
        data = content[:len(blob) % max(len(content), 1)]
    elif kind == "enormous":
        data = (content or b"0") * (4 * 1024 * 1024 // max(len(content), 1) + 1)
    elif kind == "non_utf8":
        data = b"\xff\xfe\xc3\x28" + blob + b"\xed\xa0\x80"
    elif kind == "empty":
        data = b""
    elif kind == "symlink_loop":
        os.symlink(os.path.basename(p) + ".loop", p)
        os.symlink(os.path.basename(p), p + ".loop")
        return
    elif kind == "dangling":
        os.symlink("../../nowhere/" + blob.hex(), p)
        return
    elif kind == "directory":
        os.mkdir(p)
        return
    elif kind == "fifo":
        # a FIFO where an attribute was: a read must not wait on it
        os.mkfifo(p)
        return
    elif kind == "kernel_lookalike":
        # what int() takes and the kernel never prints
        data = (b"1_0", "\u0663".encode("utf-8"), b"+4", b"1e5", b" 7 ", b"0x10")[len(blob) % 6] + b"\n"
    else:  # a directory whose entry points back at itself
        os.mkdir(p)
        os.symlink(".", os.path.join(p, "loop"))
        return
    with open(p, "wb") as f:
        f.write(data)


def test_hostile_sysfs_contents(fuzz_tree, monkeypatch, figures):
    """One file or link of a rendered lab-all host replaced by garbage, a truncated or 4 MiB copy, bytes that
    are not UTF-8, nothing, a symlink loop, a dangling link or a directory: accelerator_info reports what
    it can (a warning on the device) or fails with a message, never a traceback, never a write."""
    from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_info
    tree, entries = fuzz_tree
    patch_exits(monkeypatch)
    writes = []
    monkeypatch.setattr(_sysfs.Sysfs, "write", lambda self, path, value: writes.append(path))
    stats = {"inputs": 0, "exit": 0, "fail": 0, "tracebacks": 0}
    problems = []

    @settings(max_examples=SYSFS_EXAMPLES, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(index=st.integers(0, len(entries) - 1), kind=st.sampled_from(MUTATIONS), blob=st.binary(max_size=64))
    def check(index, kind, blob):
        p = entries[index]
        saved = _save(p)
        try:
            _mutate(p, kind, saved, blob)
            out = run_module(accelerator_info.main, {"root": tree, "nvidia_smi": "never", "include_all": True})
        finally:
            if os.path.lexists(p + ".loop"):
                os.unlink(p + ".loop")
            _restore(p, saved)
        stats["inputs"] += 1
        if out.kind == "traceback":
            stats["tracebacks"] += 1
            problems.append("%s %s: traceback\n%s" % (kind, os.path.relpath(p, tree), out.tb))
        else:
            stats[out.kind] += 1
    check()
    figures["hostile_sysfs_contents"] = stats
    assert not writes, writes[:5]
    assert not problems, "\n".join(problems[:5])
