# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Parse a rendered nova.conf / cyborg.conf piece back the way oslo.config reads it: INI with repeated keys
(MultiStrOpt) kept as lists, JSON values decoded. Prints {"first_line", "sections": {name: {key: [values]}},
"device_spec": [...], "alias": [...]} as JSON. Usage: parse_conf.py FILE"""

import configparser
import json
import sys


class _Multi(dict):
    """configparser stores each value as a list while reading; extend instead of replacing on a repeat."""

    def __setitem__(self, key, value):
        if isinstance(value, list) and key in self and isinstance(self[key], list):
            self[key].extend(value)
        else:
            super().__setitem__(key, value)


def main(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    parser = configparser.RawConfigParser(strict=False, dict_type=_Multi, interpolation=None)
    parser.optionxform = str
    parser.read_string(text)
    sections = {}
    for name in parser.sections():
        # a repeated key (MultiStrOpt) comes back as its values joined by newlines; each value is one line here
        sections[name] = dict((key, value.split("\n")) for key, value in parser.items(name, raw=True))
    pci = sections.get("pci", {})
    out = {
        "first_line": text.split("\n", 1)[0],
        "sections": sections,
        "device_spec": [json.loads(v) for v in pci.get("device_spec", [])],
        "alias": [json.loads(v) for v in pci.get("alias", [])],
    }
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
