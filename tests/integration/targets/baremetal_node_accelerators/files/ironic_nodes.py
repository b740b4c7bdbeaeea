# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Arrange and read back Ironic nodes for the integration targets, through openstacksdk (not the code under
test). Prints JSON.

  ironic_nodes.py ENDPOINT create NAME [--traits T,...] [--properties JSON]
  ironic_nodes.py ENDPOINT show NAME
  ironic_nodes.py ENDPOINT delete NAME
  ironic_nodes.py ENDPOINT lock|unlock NAME DB     (sets the node's reservation in Ironic's SQLite database, as a
                                                   conductor holding the node would: writes then get 409 NodeLocked)
"""
import json
import sqlite3
import sys

import openstack


def main(argv):
    endpoint, action, name = argv[0], argv[1], argv[2]
    conn = openstack.connect(auth_type="none", baremetal_endpoint_override=endpoint,
                             baremetal_status_code_retries=0)
    bm = conn.baremetal
    if action == "create":
        opts = dict(zip(argv[3::2], argv[4::2]))
        props = json.loads(opts.get("--properties", "{}"))
        node = bm.create_node(name=name, driver="fake-hardware", properties=props)
        traits = [t for t in opts.get("--traits", "").split(",") if t]
        if traits:
            bm.set_node_traits(node.id, traits)
    elif action in ("lock", "unlock"):
        node = bm.get_node(name)
        with sqlite3.connect(argv[3], timeout=30) as db:
            db.execute("UPDATE nodes SET reservation = ? WHERE uuid = ?",
                       ("other-conductor" if action == "lock" else None, node.id))
    elif action == "delete":
        bm.delete_node(name, ignore_missing=True)
        print("{}")
        return 0
    elif action != "show":
        raise SystemExit("unknown action %s" % action)
    node = bm.get_node(name)
    print(json.dumps({"uuid": node.id, "name": node.name, "traits": sorted(node.traits or []),
                      "properties": node.properties or {}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
