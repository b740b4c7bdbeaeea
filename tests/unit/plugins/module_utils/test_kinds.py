# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The declaration's kinds: each one object in its family's file, listed once in the drivers' registry, owning its
keys, the families it applies to, its programming module and the converge settings that module takes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.accelops.lifecycle.plugins.doc_fragments import _host, _plan
from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration as d
from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers._base import Kind
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import FAMILIES
from ansible_collections.accelops.lifecycle.plugins.modules import accelerator_converge

# the smallest valid section of each kind: a kind added to the registry needs one here
VALID = {
    "fpga": {"bitstream": "/srv/gzip.gbs", "sha256": "ab" * 32, "function_id": "d8424dc4-a4a9-3c84-9c1a-d7c6d7b3c2a7"},
    "vgpu": {"type": "nvidia-558", "count": 2},
    "vfs": {"count": 4},
    "mig": {"layout": "2 x 3g.40gb"},
    "passthrough": {},
}
FAMILY_OF = {"fpga": "fpga", "vgpu": "gpu", "vfs": "nic", "mig": "gpu", "passthrough": "pci"}
MODULES_DIR = os.path.dirname(accelerator_converge.__file__)


def entry(kind, section):
    return {"name": "f", "match": {"family": FAMILY_OF[kind]}, kind: section}


def test_every_kind_is_registered_once_under_its_own_name():
    names = _drivers.KIND_NAMES
    assert len(names) == len(set(names)), "a kind is listed twice: %s" % (names,)
    objects = _drivers.kinds()
    assert [k.name for k in objects] == list(names)
    assert all(isinstance(k, Kind) for k in objects)
    assert len(set(id(k) for k in objects)) == len(objects), "two names give one kind object"
    assert set(names) == set(VALID), "a kind without a sample section in VALID (or a sample of no kind)"


def test_an_unknown_kind_is_a_key_error():
    with pytest.raises(KeyError):
        _drivers.kind("bitstream")


@pytest.mark.parametrize("name", _drivers.KIND_NAMES)
def test_the_families_of_a_kind_exist_and_have_drivers(name):
    kind = _drivers.kind(name)
    for family in kind.families or ():
        assert family in FAMILIES, "%s names family %r, not one of %s" % (name, family, FAMILIES)
        assert _drivers.family_drivers(family), "no built-in driver of family %s, which %s needs" % (family, name)


@pytest.mark.parametrize("name", _drivers.KIND_NAMES)
def test_the_programming_module_of_a_kind_takes_its_arguments_and_settings(name):
    kind = _drivers.kind(name)
    if kind.module is None:
        assert kind.program() is None and kind.module_args(d.validate([entry(name, VALID[name])])[0], "0000:01:00.0") is None
        return
    short = kind.module.rsplit(".", 1)[-1]
    assert kind.module == "accelops.lifecycle." + short
    assert os.path.exists(os.path.join(MODULES_DIR, short + ".py")), "%s names a module that does not exist" % name
    program = kind.program()
    assert program.name == short
    args = kind.module_args(d.validate([entry(name, VALID[name])])[0], "0000:01:00.0")
    assert args and set(args) <= set(program.argument_spec), "arguments %s are not all options of %s" % (args, short)
    converge_options = set(yaml.safe_load(accelerator_converge.DOCUMENTATION)["options"])
    for fragment in (_host, _plan):  # the fragments accelerator_converge's documentation extends
        converge_options.update(yaml.safe_load(fragment.ModuleDocFragment.DOCUMENTATION)["options"])
    for option, setting in kind.converge_settings.items():
        assert option in program.argument_spec, "%s has no option %s" % (short, option)
        assert setting in converge_options, "accelerator_converge has no option %s" % setting


@pytest.mark.parametrize("name", _drivers.KIND_NAMES)
def test_a_kind_accepts_its_keys_and_refuses_others(name):
    out = d.validate([entry(name, VALID[name])])[0]
    assert out["kind"] == name and isinstance(out[name], dict)
    with pytest.raises(d.DeclarationError) as e:
        d.validate([entry(name, dict(VALID[name], colour="blue"))])
    assert "(f).%s: unknown key(s) colour; accepted: %s" % (name, ", ".join(_drivers.kind(name).keys)) in str(e.value)


@pytest.mark.parametrize("name", [n for n in _drivers.KIND_NAMES if _drivers.kind(n).families])
def test_a_kind_refuses_a_match_of_another_family(name):
    other = next(f for f in FAMILIES if f not in _drivers.kind(name).families)
    with pytest.raises(d.DeclarationError) as e:
        d.validate([dict(entry(name, VALID[name]), match={"family": other})])
    assert "%s functions need family %s, not %s" % (name, "/".join(_drivers.kind(name).families), other) in str(e.value)


def _modules_loaded_by(code):
    """The collection's module_utils a fresh interpreter has loaded after ``code``."""
    script = code + (
        "\nimport json, sys\n"
        "print(json.dumps(sorted(m.rsplit('.', 1)[-1] for m in sys.modules if '.plugins.module_utils.' in m)))\n")
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                         capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


IMPORT = "from ansible_collections.accelops.lifecycle.plugins.module_utils import _declaration as d\n"
ENGINES = {"_fpga", "_vgpu", "_sriov", "nvidia_mig", "nvidia_vgpu", "_hostmodule"}


def test_loading_the_declaration_loads_no_driver_and_no_engine():
    loaded = _modules_loaded_by(IMPORT)
    assert "_drivers" not in loaded and not loaded & ENGINES, sorted(loaded)


def test_resolving_a_declaration_loads_no_programming_engine():
    cards = [{"address": "0000:01:00.0", "family": "nic", "sriov": {"totalvfs": 8}},
             {"address": "0000:02:00.0", "family": "gpu", "gpu": {"mdev_types": [{"id": "nvidia-558", "mdevs": []}]}},
             {"address": "0000:03:00.0", "family": "fpga", "fpga": {"ports": []}},
             {"address": "0000:04:00.0", "family": "pci"}]
    entries = [dict(entry(k, VALID[k]), name=k) for k in ("vfs", "vgpu", "fpga", "passthrough")]
    loaded = _modules_loaded_by(IMPORT + "r = d.resolve(%r, {'accelerators': %r})\nassert len(r['assignments']) == 4, r" % (
        entries, cards))
    assert "_drivers" in loaded and not loaded & ENGINES, sorted(loaded & ENGINES)


def test_a_mig_declaration_loads_the_mig_engine_only_when_it_is_programmed():
    loaded = _modules_loaded_by(IMPORT + "d.validate([%r])" % (entry("mig", VALID["mig"]),))
    assert "nvidia" in loaded and not loaded & ENGINES, sorted(loaded & ENGINES)
    kinds = "from ansible_collections.accelops.lifecycle.plugins.module_utils import _drivers\n"
    programmed = _modules_loaded_by(kinds + "assert _drivers.kind('mig').program().name == 'nvidia_mig'")
    assert "nvidia_mig" in programmed and not programmed & {"_fpga", "_vgpu"}, sorted(programmed & ENGINES)


def test_the_vocabulary_loads_no_driver_and_the_card_state_loads_them_only_to_ask_whether_a_card_is_in_use():
    vocab = "from ansible_collections.accelops.lifecycle.plugins.module_utils import _vocab\n"
    assert "_drivers" not in _modules_loaded_by(vocab + "_vocab.pci_address('3b:00.0')")
    state = "from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate\n"
    assert "_drivers" not in _modules_loaded_by(state + "_cardstate.cards([{'address': '0000:3b:00.0'}])")
    assert "_drivers" in _modules_loaded_by(state + "_cardstate.card_in_use({'address': '0000:3b:00.0'}, {})")


def test_a_device_profile_in_cyborgs_own_form_loads_no_driver():
    cyborg = "from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C\n"
    raw = _modules_loaded_by(cyborg + "C.normalize_groups([{'resources:FPGA': '1', 'trait:CUSTOM_X': 'required'}])")
    assert "_drivers" not in raw, sorted(raw)
    friendly = _modules_loaded_by(cyborg + "C.normalize_groups([{'family': 'fpga', 'vendor': 'intel'}])")
    assert "_drivers" in friendly
