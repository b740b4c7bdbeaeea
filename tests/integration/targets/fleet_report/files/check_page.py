# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Compare the DOM of the fleet report, as Chromium built it, with Placement's own numbers.

Usage: check_page.py DOM_FILE SETTINGS

SETTINGS (JSON): {"placement": URL, "token": T, "roots": [compute node names], "inventory_names": {compute node name:
inventory name}, "traits": {label: trait}, "profiles": {name: [request groups, Cyborg's form]}, "literal": [strings
that must appear as text], "png": the screenshot's path}.

Placement is read here over plain HTTP (urllib), not through the collection: the providers of each root's tree, their
traits, inventories and usages, and each profile's allocation candidates. Prints what it compared as JSON and exits
1 on the first mismatch.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser


class Page(HTMLParser):
    """Rows of the functions, host and profile tables, by their data-* attributes, and the page's text."""

    def __init__(self):
        super().__init__()
        self.functions, self.hosts, self.profiles, self.sections, self.summary = [], {}, {}, {}, {}
        self.text, self.elements = [], []
        self._row = None
        self._col = None
        self._summary = None
        self._section = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append(tag)
        cls = (a.get("class") or "").split()
        if tag == "tr" and "function" in cls:
            self._row = {"function": a.get("data-function"), "trait": a.get("data-trait"), "rc": a.get("data-rc")}
            self.functions.append(self._row)
        elif tag == "tr" and "host-row" in cls:
            self._row = self.hosts.setdefault(a.get("data-host"), {})
        elif tag == "tr" and "profile" in cls:
            self._row = self.profiles.setdefault(a.get("data-profile"), {"state": a.get("data-satisfiable")})
        elif tag == "section" and "host" in cls:
            self._section = self.sections.setdefault(a.get("data-placement-host"), {"text": [], "cards": {}})
        elif tag == "tr" and "card" in cls and self._section is not None:
            self._section["cards"][a.get("data-address")] = a.get("data-status")
        if tag == "td" and self._row is not None and a.get("data-col"):
            self._col = a["data-col"]
            self._row[self._col] = ""
        if a.get("data-summary"):
            self._summary = a["data-summary"]
            self.summary[self._summary] = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self._col = None
        elif tag == "tr":
            self._row = None
        elif tag == "section":
            self._section = None
        elif tag == "b":
            self._summary = None

    def handle_data(self, data):
        self.text.append(data)
        if self._row is not None and self._col:
            self._row[self._col] += data
        if self._summary:
            self.summary[self._summary] += data
        if self._section is not None:
            self._section["text"].append(data)


def get(base, token, path, version="1.39"):
    req = urllib.request.Request(base + path, headers={"X-Auth-Token": token, "Accept": "application/json",
                                                       "OpenStack-API-Version": "placement " + version})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)
    except urllib.error.HTTPError as e:
        if e.code == 400:
            return None
        raise


def fail(msg, **data):
    print(json.dumps(dict(data, failure=msg), indent=1, default=str))
    sys.exit(1)


def main():
    dom_file = sys.argv[1]
    cfg = json.loads(sys.argv[2])
    base, token = cfg["placement"].rstrip("/"), cfg["token"]
    page = Page()
    with open(dom_file, encoding="utf-8") as f:
        page.feed(f.read())

    # Placement's numbers: every provider below each root, whoever reports it
    providers = []
    for name in cfg["roots"]:
        found = get(base, token, "/resource_providers?name=" + urllib.parse.quote(name, safe=""))["resource_providers"]
        if len(found) != 1:
            fail("compute node %r: %d providers in Placement" % (name, len(found)))
        root = found[0]["uuid"]
        for p in get(base, token, "/resource_providers?in_tree=" + root)["resource_providers"]:
            if p["uuid"] == root:
                continue
            u = p["uuid"]
            providers.append({
                "root": name, "name": p["name"],
                "traits": get(base, token, "/resource_providers/%s/traits" % u)["traits"],
                "inventories": get(base, token, "/resource_providers/%s/inventories" % u)["inventories"],
                "usages": get(base, token, "/resource_providers/%s/usages" % u)["usages"],
            })

    def count(select):
        out = {"total": 0, "used": 0, "free": 0, "drained": 0}
        for p in providers:
            for rc, inv in p["inventories"].items():
                if not select(p, rc):
                    continue
                used = p["usages"].get(rc, 0)
                out["total"] += inv["total"]
                out["used"] += used
                out["free"] += max(0, inv["total"] - inv["reserved"] - used)
                if inv["reserved"] >= inv["total"] > 0:
                    out["drained"] += max(0, inv["total"] - used)
        return out

    compared = {"functions": {}, "classes": {}, "profiles": {}, "hosts": {}}
    # each declared function: the page's row against the providers that carry its trait
    for label, trait in cfg["traits"].items():
        rows = [r for r in page.functions if r["trait"] == trait]
        if len(rows) != 1:
            fail("function %s (%s): %d rows on the page" % (label, trait, len(rows)), rows=page.functions)
        row = rows[0]
        want = count(lambda p, rc, t=trait: t in p["traits"])
        got = dict((k, int(row[k])) for k in want)
        if row["function"] != label or got != want:
            fail("function %s: the page says %s, Placement %s" % (label, got, want), row=row)
        compared["functions"][label] = want

    # every resource class: the sum of the page's rows against every provider of the trees
    for rc in sorted(set(rc for p in providers for rc in p["inventories"])):
        want = count(lambda p, c, rc=rc: c == rc)
        got = dict((k, sum(int(r[k]) for r in page.functions if r["rc"] == rc)) for k in want)
        if got != want:
            fail("resource class %s: the page's rows add up to %s, Placement %s" % (rc, got, want))
        compared["classes"][rc] = want
    if set(r["rc"] for r in page.functions) - set(compared["classes"]):
        fail("rows for resource classes Placement does not have", rows=page.functions)

    # per host: the capacity row against the host's tree
    for name in cfg["roots"]:
        want = count(lambda p, rc, n=name: p["root"] == n)
        row = page.hosts.get(cfg["inventory_names"][name]) or {}
        got = dict((k, int(row.get(k, -1))) for k in ("total", "used", "free", "drained"))
        if got != want:
            fail("host %s: the page says %s, Placement %s" % (name, got, want), row=row)
        compared["hosts"][name] = want

    # each profile: its candidate count against Placement's allocation candidates for the same groups
    for name, groups in cfg["profiles"].items():
        q = []
        for i, g in enumerate(groups, 1):
            res = ",".join("%s:%s" % (k.split(":", 1)[1], v) for k, v in g.items() if k.startswith("resources:"))
            req = ",".join(k.split(":", 1)[1] for k, v in g.items() if k.startswith("trait:") and v == "required")
            q.append("resources%d=%s" % (i, res))
            if req:
                q.append("required%d=%s" % (i, req))
        if len(groups) > 1:
            q.append("group_policy=none")
        ans = get(base, token, "/allocation_candidates?" + "&".join(q))
        want = len(ans["allocation_requests"]) if ans else 0
        row = page.profiles.get(name)
        if row is None or int(row["candidates"]) != want:
            fail("profile %s: the page says %s candidates, Placement %d" % (name, row, want))
        if row["state"] != ("satisfiable" if want else "unsatisfiable"):
            fail("profile %s: state %s with %d candidates" % (name, row["state"], want))
        compared["profiles"][name] = want

    text = "".join(page.text)
    for s in cfg.get("literal") or []:
        if s not in text:
            fail("%r is not in the page's text (escaped wrongly, or missing)" % s)
    if "script" in page.elements:
        fail("the page has a script element")
    with open(cfg["png"], "rb") as f:
        png = f.read()
    if not png.startswith(b"\x89PNG\r\n\x1a\n"):
        fail("%s is not a PNG" % cfg["png"])
    compared["png_bytes"] = len(png)
    compared["summary"] = page.summary
    compared["sections"] = dict((k, v["cards"]) for k, v in page.sections.items())
    print(json.dumps(compared, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
