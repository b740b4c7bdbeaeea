# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Placement names: normalisation, traits, resource classes."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming as n


@pytest.mark.parametrize("raw,expected", [
    ("GRID T4-2B", "GRID_T4_2B"),
    ("  nvidia--223 ", "NVIDIA_223"),
    ("sym;asym", "SYM_ASYM"),
    ("a__b", "A_B"),
    ("_x_", "X"),
    ("Ünïcode", "N_CODE"),
    (None, ""),
    (42, "42"),
])
def test_normalize(raw, expected):
    assert n.normalize(raw) == expected


def test_custom_prefix_once():
    assert n.custom("custom_foo", "bar") == "CUSTOM_FOO_BAR"
    assert n.custom("foo") == "CUSTOM_FOO"
    assert n.custom("", "x", None) == "CUSTOM_X"
    with pytest.raises(ValueError):
        n.custom("---", "")


def test_function_name_without_ascii_letter_or_digit_gives_no_trait():
    # the bare CUSTOM_FUNCTION is outside the managed CUSTOM_FUNCTION_ prefix: it would never be removed
    for name in ("\u65e5\u672c\u8a9e", "---", ""):
        with pytest.raises(ValueError, match="no ASCII letter or digit"):
            n.function_trait(name)
    assert n.discovered_function_trait("\u65e5\u672c\u8a9e", "nvidia-231") == "CUSTOM_FUNCTION_NVIDIA_231"
    assert n.discovered_function_trait(None, "GRID T4-2B") == "CUSTOM_FUNCTION_GRID_T4_2B"
    assert n.discovered_function_trait("\u65e5\u672c\u8a9e", None) is None


def test_traits():
    assert n.function_trait("GRID T4-2B") == "CUSTOM_FUNCTION_GRID_T4_2B"
    assert n.fpga_function_trait("intel", "d8424dc4-a4a3-c413-f89e-433683f9040b") == \
        "CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A3C413F89E433683F9040B"
    assert n.fpga_region_trait("Intel", "9346116df8f65a1ba2b6f1ec3a8a0b5e") == \
        "CUSTOM_FPGA_REGION_INTEL_9346116DF8F65A1BA2B6F1EC3A8A0B5E"
    assert n.family_trait("gpu") == "CUSTOM_ACCELERATOR_GPU"
    assert n.programming_model_trait("dynamic") == "CUSTOM_PROGRAMMING_DYNAMIC"
    assert n.trait("fpga", "intel", "pac arria10") == "CUSTOM_FPGA_INTEL_PAC_ARRIA10"
    assert n.resource_class("vgpu", "l40-8q") == "CUSTOM_VGPU_L40_8Q"


def test_pci_resource_class():
    assert n.pci_resource_class("10de", "1eb8") == "CUSTOM_PCI_10DE_1EB8"
    assert n.pci_resource_class("0x8086", "0x154c") == "CUSTOM_PCI_8086_154C"
    assert n.pci_resource_class("1af4", "41") == "CUSTOM_PCI_1AF4_0041"
    with pytest.raises(ValueError):
        n.pci_resource_class("xyz", "1")


def test_long_names_fit_and_stay_distinct():
    a = n.custom("x" * 300 + "a")
    b = n.custom("x" * 300 + "b")
    assert len(a) == n.MAX_LENGTH and len(b) == n.MAX_LENGTH
    assert a != b
    assert n.is_valid(a) and n.is_valid(b)
    assert n.custom("y" * 248) == "CUSTOM_" + "Y" * 248  # exactly 255: kept as is


def test_is_valid():
    assert n.is_valid("CUSTOM_A_1")
    assert not n.is_valid("CUSTOM_")
    assert not n.is_valid("custom_a")
    assert not n.is_valid("HW_CPU_X86_AVX")
    assert not n.is_valid(None)


@given(st.text(max_size=400), st.text(max_size=40))
def test_any_text_gives_a_valid_name_or_value_error(a, b):
    try:
        name = n.custom(a, b)
    except ValueError:
        assert not n.normalize(a) and not n.normalize(b)
        return
    assert n.is_valid(name)
    assert "__" not in name
    assert n.custom(a, b) == name  # deterministic
