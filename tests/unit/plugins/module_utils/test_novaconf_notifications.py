# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""with_notifications: Nova's versioned notifications switched on in the rendered nova.conf (docs/events.md)."""

from __future__ import annotations

import configparser

import pytest

from ansible_collections.accelops.lifecycle.plugins.module_utils import _novaconf as nc

RENDERED = {"nova_conf": nc.render_ini([("pci", [("report_in_placement", "True")])], "cn-1"),
            "nova_sections": [["pci", [["report_in_placement", "True"]]]]}


def read(text):
    ini = configparser.ConfigParser(interpolation=None)
    ini.read_string(text)
    return ini


def test_sections_added_after_the_devices():
    out = nc.with_notifications(RENDERED, ["versioned_notifications", "accelops_events"])
    ini = read(out["nova_conf"])
    assert ini["pci"]["report_in_placement"] == "True"
    assert ini["notifications"]["notification_format"] == "versioned"
    assert ini["notifications"]["versioned_notifications_topics"] == "versioned_notifications,accelops_events"
    assert ini["oslo_messaging_notifications"]["driver"] == "messagingv2"
    assert [s[0] for s in out["nova_sections"]] == ["pci", "notifications", "oslo_messaging_notifications"]
    assert RENDERED["nova_sections"] == [["pci", [["report_in_placement", "True"]]]]  # the input is not changed


@pytest.mark.parametrize("off", [None, []])
def test_off_leaves_the_file_alone(off):
    assert nc.with_notifications(RENDERED, off) is RENDERED


@pytest.mark.parametrize("bad", [[""], ["a b"], [3], {"topic": "x"}])
def test_bad_topics_name_the_option_and_the_form(bad):
    with pytest.raises(nc.NovaConfigError, match=r"^notifications: a list of topic names \(e.g. \[versioned_notifications\]\)"):
        nc.with_notifications(RENDERED, bad)
