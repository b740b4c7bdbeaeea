# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Device profile validation (Cyborg's rules and the ones it misses), the friendly form, comparison, error
bodies and the allocation candidate query. Behaviour against a real Cyborg: the device_profile targets."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cyborg as C
from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming


@pytest.mark.parametrize("name", ["fpga-gzip", "A_1", "x" * 255])
def test_good_names(name):
    assert C.check_name(name) == name


@pytest.mark.parametrize("name,match", [
    ("bad name", r"\^\[a-zA-Z0-9-_\]\+\$"),     # Cyborg: 400
    ("über", "letters, digits"),                  # Cyborg: 400
    ("", "needs a name"),                         # Cyborg: 500
    (None, "needs a name"),                       # Cyborg: 500
    ("x" * 256, "holds 255"),                     # Cyborg stores it on SQLite, MySQL refuses
])
def test_bad_names(name, match):
    with pytest.raises(C.CyborgInputError, match=match):
        C.check_name(name)


def test_raw_group_is_normalised_to_strings():
    assert C.normalize_groups([{"resources:FPGA": 1, "trait:CUSTOM_FUNCTION_GZIP": "required",
                                "accel:bitstream_id": "abc"}]) == \
        [{"accel:bitstream_id": "abc", "resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required"}]
    assert C.normalize_groups([{"resources:CUSTOM_QAT": "2", "trait:CUSTOM_X": "forbidden"}]) == \
        [{"resources:CUSTOM_QAT": "2", "trait:CUSTOM_X": "forbidden"}]


@pytest.mark.parametrize("groups,match", [
    # what Cyborg refuses with 400
    ([{"foo:FPGA": "1"}], r"must start with resources:, trait: or accel:"),
    ([{"resources:FPGA": "1", "foo": "x"}], r"resources:, trait: or accel:"),
    ([{"resources:FPGA": "1", "trait:FOO": "required"}], r"must be a custom trait \(CUSTOM_"),
    ([{"resources:FPGA": "1", "trait:CUSTOM_FOO": "maybe"}], r"'required' or 'forbidden'"),
    ([{"resources:FPGA": "1", "trait:CUSTOM_FOO": "Required"}], r"'required' or 'forbidden' \(lower case\)"),
    ([{"resources:FPGA": "a"}], r"whole number"),
    ([{"resources:FPGA": "1.5"}], r"whole number"),
    ([{"resources:DISK": "1"}], r"FPGA, GPU, VGPU, PGPU or a custom class"),
    ([{"resources:fpga": "1"}], r"'fpga' is not one Cyborg supports"),
    ([{"resources:": "1"}], r"'' is not one Cyborg supports"),
    # what Cyborg answers 500 to
    ([], r"non-empty list of groups"),
    ({"resources:FPGA": "1"}, r"non-empty list of groups"),
    (["a"], r"got str"),
    ([{"resources:FPGA": None}], r"whole number"),
    # what Cyborg stores but Placement (or MySQL) refuses later
    ([{}], r"the group is empty"),
    ([{"trait:CUSTOM_A": "required"}], r"no resources:<CLASS> key"),
    ([{"resources:FPGA": "0"}], r"at least 1"),
    ([{"resources:FPGA": "-1"}], r"digits only"),
    ([{"resources:FPGA": " 1"}], r"digits only"),
    ([{"resources:FPGA": "+1"}], r"digits only"),
    ([{"resources:FPGA": True}], r"whole number"),
    ([{"resources:CUSTOM_": "1"}], r"not a valid custom resource class"),
    ([{"resources:FPGA": "1", "trait:CUSTOM_foo": "required"}], r"CUSTOM_FOO"),
    ([{"resources:FPGA": "1", "trait:CUSTOM_A B": "required"}], r"not a valid custom trait"),
    ([{"resources:FPGA": "1", "accel:": "x"}], r"names no attribute"),
    ([{"resources:FPGA": "1", "accel:bitstream_id": ""}], r"non-empty string"),
])
def test_invalid_groups_are_refused_with_the_group_named(groups, match):
    with pytest.raises(C.CyborgInputError, match=match) as e:
        C.normalize_groups(groups)
    assert str(e.value).startswith("groups")


def test_friendly_form_matches_what_placement_provider_tree_publishes():
    (g,) = C.normalize_groups([{"function": "gzip", "vendor": "intel", "family": "fpga", "count": 1}])
    assert g == {"resources:FPGA": "1", "trait:CUSTOM_FPGA_INTEL": "required",
                 "trait:%s" % _naming.function_trait("gzip"): "required"}
    assert "trait:CUSTOM_FUNCTION_GZIP" in g


def test_friendly_form_variants():
    (g,) = C.normalize_groups([{"family": "vgpu", "vendor": "nvidia", "function": "GRID T4-2B", "count": "2"}])
    assert g == {"resources:VGPU": "2", "trait:CUSTOM_VENDOR_10DE": "required",
                 "trait:CUSTOM_FUNCTION_GRID_T4_2B": "required"}
    (g,) = C.normalize_groups([{"family": "fpga", "vendor": "intel",
                                "function_id": "d8424dc4-a4a3-c413-f89e-433683f9040b"}])
    assert g["trait:CUSTOM_FPGA_FUNCTION_ID_INTEL_D8424DC4A4A3C413F89E433683F9040B"] == "required"
    (g,) = C.normalize_groups([{"resource_class": "CUSTOM_QAT", "traits": ["gold"], "forbidden_traits": "CUSTOM_OLD",
                                "accel": {"bitstream_id": "b1"}}])
    assert g == {"resources:CUSTOM_QAT": "1", "trait:CUSTOM_GOLD": "required", "trait:CUSTOM_OLD": "forbidden",
                 "accel:bitstream_id": "b1"}
    (g,) = C.normalize_groups([{"family": "gpu", "vendor": "0x10DE"}])
    assert g == {"resources:PGPU": "1", "trait:CUSTOM_VENDOR_10DE": "required"}


@pytest.mark.parametrize("group,match", [
    ({"family": "fpga", "colour": "red"}, r"unknown key\(s\) colour"),
    ({"family": "fpga", "resources:FPGA": "1"}, r"key .family. must start with resources:"),   # mixed: Cyborg form
    ({"function": "gzip"}, r"needs family"),
    ({"family": "tpu"}, r"family 'tpu' is not one of"),
    ({"family": "fpga", "resource_class": "FPGA"}, r"not both"),
    ({"family": "gpu", "vendor": "acme"}, r"PCI vendor id"),
    ({"family": "gpu", "function_id": "x"}, r"needs family fpga and a vendor"),
    ({"family": "fpga", "count": 0}, r"at least 1"),
    ({"family": "fpga", "traits": ["a"], "forbidden_traits": ["a"]}, r"both required and forbidden"),
    ({"family": "fpga", "function": "---"}, r"no usable trait name"),
    ({"family": "fpga", "accel": ["x"]}, r"accel: expected a mapping"),
])
def test_friendly_form_errors(group, match):
    with pytest.raises(C.CyborgInputError, match=match):
        C.normalize_groups([group])


def test_comparison_is_name_description_groups_only():
    cur = {"uuid": "u1", "name": "p", "description": None, "created_at": "x",
           "groups": [{"resources:FPGA": "1", "trait:CUSTOM_A": "required"}]}
    want = C.desired_profile("p", None, [{"trait:CUSTOM_A": "required", "resources:FPGA": 1}])
    assert C.differences(cur, want) == []
    assert C.differences(cur, dict(want, description="")) == []
    assert C.differences(cur, dict(want, description="new")) == ["description"]
    assert C.differences(cur, dict(want, description="new"), compare_description=False) == []
    two = C.desired_profile("p", None, [{"resources:FPGA": "1"}, {"resources:GPU": "1"}])
    swapped = C.desired_profile("p", None, [{"resources:GPU": "1"}, {"resources:FPGA": "1"}])
    assert C.differences(dict(cur, groups=two["groups"]), swapped) == ["groups"]   # order numbers ARQ groups


def test_fault_text_decodes_json_in_json():
    body = json.dumps({"error_message": json.dumps({"faultcode": "Client", "faultstring": "Unsupported resource "
                                                    "class DISK", "debuginfo": None})})
    assert C.fault_text(body) == "Unsupported resource class DISK"
    assert C.fault_text('{"error_message": "plain words"}') == "plain words"
    assert C.fault_text("<html>oops</html>") == "<html>oops</html>"
    assert C.fault_text("") == "no details"
    placement = json.dumps({"errors": [{"status": 400, "detail": "The server could not comply.\n\n No such trait(s): "
                                        "CUSTOM_X.  ", "title": "Bad Request"}]})
    assert C.fault_text(placement) == "No such trait(s): CUSTOM_X."
    e = C.CyborgHTTPError("DELETE", "/device_profiles/u", 500, json.dumps(
        {"error_message": json.dumps({"faultstring": "(sqlite3.IntegrityError) FOREIGN KEY constraint failed"})}))
    assert "accelerator requests still use" in C.explain(e, "x")
    e403 = C.CyborgHTTPError("POST", "/device_profiles", 403, body)
    assert "admin role" in C.explain(e403, "x") and "HTTP 403" in C.explain(e403, "x")


def test_candidate_query():
    groups = C.normalize_groups([{"resources:FPGA": "1", "trait:CUSTOM_F": "required", "trait:CUSTOM_OLD": "forbidden"},
                                 {"resources:VGPU": "2"}])
    assert C.candidate_query(groups) == ("/allocation_candidates?resources1=FPGA:1&required1=CUSTOM_F,!CUSTOM_OLD"
                                         "&resources2=VGPU:2&group_policy=none")
    assert C.candidate_query(groups[1:], limit=5) == "/allocation_candidates?resources1=VGPU:2&limit=5"


class _FakePlacement(object):
    def __init__(self, body):
        self.body = body
        self.asked = []

    def get(self, path):
        self.asked.append(path)
        return self.body


def test_satisfiability_reports_hosts_by_root_name():
    body = {"allocation_requests": [{"allocations": {"c1": {"resources": {"FPGA": 1}}}},
                                    {"allocations": {"c2": {"resources": {"FPGA": 1}}}}],
            "provider_summaries": {"c1": {"root_provider_uuid": "r1"}, "c2": {"root_provider_uuid": "r2"}}}
    got = C.satisfiability(_FakePlacement(body), [{"resources:FPGA": "1"}], {"r1": "cn1", "r2": "cn2", "c1": "cn1_a"})
    assert got["count"] == 2 and got["hosts"] == ["cn1", "cn2"] and got["providers"] == ["c2", "cn1_a"]
    assert C.satisfiability(_FakePlacement({}), [{"resources:FPGA": "1"}])["count"] == 0
