# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the collection expects Placement to hold for a host: ``desired_provider.py DISCOVERY_JSON HOST [NAMES_JSON]``
(DISCOVERY_JSON ``-``: read it from stdin).

Prints the JSON list that ``_placement.desired_providers`` gives for the discovery result (HOST being the name
prefix, as Cyborg's agent uses its ``socket.gethostname()``), as Cyborg reports the card (``reporter='cyborg'``).
The target compares it with the provider Cyborg's own agent made. Run with the collection on PYTHONPATH
(ANSIBLE_COLLECTIONS_PATH's first entry).
"""

import json
import sys

from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P


def main(discovery_file, host, names_json="{}"):
    if discovery_file == "-":
        discovery = json.load(sys.stdin)
    else:
        with open(discovery_file) as f:
            discovery = json.load(f)
    print(json.dumps(P.desired_providers(host, discovery, function_names=json.loads(names_json), reporter="cyborg")))


if __name__ == "__main__":
    main(*sys.argv[1:4])
