# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Filter inputs found by tests/reliability/test_hostile_input.py (issue 21) that ended in a traceback."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.accelops.lifecycle.plugins.filter.resolve_functions import resolve_functions

DECLARATION = [{"name": "vf", "match": {"family": "nic"}, "vfs": {"count": 4}}]


@pytest.mark.parametrize("address", [{}, [None], [], 7, None])
def test_resolve_functions_record_address_that_is_not_a_string(address):
    # was: TypeError: unhashable type: 'dict' in _declaration._cards (records are keyed by address)
    records = [{"address": "0000:d8:00.0", "family": "nic", "physfn": None, "units": []},
               {"address": address, "family": "nic", "physfn": None, "units": []}]
    with pytest.raises(AnsibleFilterError, match=r"^resolve_functions: discovery: expected a list of accelerator_info "
                                                 r"records \(mappings with 'address', a PCI address string\)"):
        resolve_functions({"accelerators": records}, DECLARATION)
