# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each module's AnsiballZ payload: the collection's module_utils files it ships and their size. The files are
found as ansible-core finds them (every module_utils module the import statements reach, transitively), from the
source with ``ast``: tests/unit/plugins/test_module_payloads.py's ``payload_files``, which that test checks
against what each module loads. ansible-core's own files in the payload are not counted.

Usage: .venv/bin/python bench/module_payloads.py [--collections DIR] [--files]
(DIR holds ansible_collections/accelops/lifecycle; default: a copy of this checkout made by tools/stage.sh.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--collections", help="the directory that holds ansible_collections/ (default: stage this checkout)")
    ap.add_argument("--files", action="store_true", help="list each module's files")
    args = ap.parse_args()
    root = args.collections or subprocess.run([os.path.join(TOP, "tools", "stage.sh"), os.path.join(TOP, ".build", "payloads")],
                                              check=True, stdout=subprocess.PIPE, text=True).stdout.strip().rsplit(
                                                  "/ansible_collections/", 1)[0]
    collection = os.path.join(root, "ansible_collections", "accelops", "lifecycle")
    sys.path[:0] = [root, os.path.join(collection, "tests", "unit", "plugins")]
    from test_module_payloads import payload_files  # pylint: disable=import-error
    modules_dir = os.path.join(collection, "plugins", "modules")
    print("%-28s %5s %9s" % ("module", "files", "files KB"))
    for name in sorted(n[:-3] for n in os.listdir(modules_dir) if n.endswith(".py") and not n.startswith("_")):
        files = payload_files(os.path.join(modules_dir, name + ".py"), os.path.join(collection, "plugins", "module_utils"))
        print("%-28s %5d %9.1f" % (name, len(files), sum(os.path.getsize(p) for p in files.values()) / 1024.0))
        if args.files:
            print("    " + " ".join(sorted(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
