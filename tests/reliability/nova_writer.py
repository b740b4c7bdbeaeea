# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Another writer to Placement, in its own process, writing the way nova-compute and the Cyborg agent do:
read a provider's traits or inventories with its generation, change only its own part, PUT with that
generation, and on HTTP 409 read again and redo its change on top of what is there now.

Standard library only. Driven over stdin/stdout, one JSON object a line:

``{"cmd": "setup", "endpoint": E, "token": T, "trait_providers": [uuid...], "inventory_providers":
{uuid: resource class}, "seed": n}``
    what to write to: its own traits (``CUSTOM_NOVA_W_0..3``) on ``trait_providers``, the ``total`` of one
    resource class on each of ``inventory_providers``. Answers ``{"ok": true}``.
``{"cmd": "go"}``
    start writing (a thread, as fast as Placement answers) until ``stop``. Answers ``{"ok": true}``.
``{"cmd": "stop"}``
    stop after the write in progress and answer with what it committed: ``{"traits": {uuid: [its traits]},
    "inventories": {uuid: total}, "writes": n, "conflicts": n, "errors": [...]}``.
"""

from __future__ import annotations

import json
import random
import sys
import threading
import urllib.error
import urllib.request

MICROVERSION = "placement 1.39"
OWN = ["CUSTOM_NOVA_W_%d" % i for i in range(4)]


class Writer(object):
    def __init__(self, endpoint, token, trait_providers, inventory_providers, seed):
        self.endpoint, self.token = endpoint, token
        self.trait_providers = list(trait_providers)
        self.inventory_providers = dict(inventory_providers)
        self.rng = random.Random(seed)
        self.traits = {}        # uuid -> the set of its own traits it last committed
        self.inventories = {}   # uuid -> the total it last committed
        self.writes = self.conflicts = 0
        self.errors = []
        self.running = threading.Event()
        self.thread = None

    def request(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint + path, data=data, method=method, headers={
            "X-Auth-Token": self.token, "OpenStack-API-Version": MICROVERSION,
            "Content-Type": "application/json", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read().decode() or "null")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def ensure_traits(self):
        for t in OWN:
            self.request("PUT", "/traits/" + t)

    def write_traits(self, uuid):
        """Toggle one of its own traits on ``uuid``, generation-checked, redone on conflict."""
        want = set(self.traits.get(uuid, set()))
        want ^= {self.rng.choice(OWN)}
        for dummy in range(50):
            status, cur = self.request("GET", "/resource_providers/%s/traits" % uuid)
            if status != 200:
                self.errors.append("GET traits %s: %s" % (uuid, status))
                return
            new = sorted((set(cur["traits"]) - set(OWN)) | want)
            status, body = self.request("PUT", "/resource_providers/%s/traits" % uuid,
                                        {"traits": new, "resource_provider_generation": cur["resource_provider_generation"]})
            if status == 200:
                self.writes += 1
                self.traits[uuid] = want
                return
            if status == 409:
                self.conflicts += 1
                continue
            self.errors.append("PUT traits %s: %s %s" % (uuid, status, body))
            return
        self.errors.append("PUT traits %s: 50 conflicts in a row" % uuid)

    def write_inventory(self, uuid, rc):
        """Set a new total of ``rc`` on ``uuid`` (keeping the other classes), generation-checked."""
        total = self.rng.randint(1, 64)
        for dummy in range(50):
            status, cur = self.request("GET", "/resource_providers/%s/inventories" % uuid)
            if status != 200:
                self.errors.append("GET inventories %s: %s" % (uuid, status))
                return
            invs = cur["inventories"]
            inv = dict(invs.get(rc) or {"reserved": 0, "min_unit": 1, "step_size": 1, "allocation_ratio": 1.0})
            inv.update(total=total, max_unit=total)
            invs[rc] = inv
            status, body = self.request("PUT", "/resource_providers/%s/inventories" % uuid,
                                        {"inventories": invs, "resource_provider_generation": cur["resource_provider_generation"]})
            if status == 200:
                self.writes += 1
                self.inventories[uuid] = total
                return
            if status == 409:
                self.conflicts += 1
                continue
            self.errors.append("PUT inventories %s: %s %s" % (uuid, status, body))
            return
        self.errors.append("PUT inventories %s: 50 conflicts in a row" % uuid)

    def loop(self):
        jobs = [("t", u) for u in self.trait_providers] + [("i", u) for u in self.inventory_providers]
        while self.running.is_set():
            kind, u = self.rng.choice(jobs)
            if kind == "t":
                self.write_traits(u)
            else:
                self.write_inventory(u, self.inventory_providers[u])

    def go(self):
        self.running.set()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.running.clear()
        if self.thread:
            self.thread.join()
        return {"traits": dict((u, sorted(t)) for u, t in self.traits.items()), "inventories": self.inventories,
                "writes": self.writes, "conflicts": self.conflicts, "errors": self.errors}


def main():
    writer = None
    for line in sys.stdin:
        msg = json.loads(line)
        cmd = msg["cmd"]
        if cmd == "setup":
            writer = Writer(msg["endpoint"], msg["token"], msg["trait_providers"], msg["inventory_providers"],
                            msg.get("seed", 0))
            writer.ensure_traits()
            out = {"ok": True}
        elif cmd == "go":
            writer.go()
            out = {"ok": True}
        elif cmd == "stop":
            out = writer.stop()
        else:
            out = {"error": "unknown command %r" % cmd}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
