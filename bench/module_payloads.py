# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each module's AnsiballZ payload: the collection's module_utils files it ships and their size, built by
ansible-core's own payload builder (what a task sends to a host; the files of ansible-core it adds are in the zip
size only).

Usage: .venv/bin/python bench/module_payloads.py [--collections DIR] [--files]
(DIR holds ansible_collections/accelops/lifecycle; default: a copy of this checkout made by tools/stage.sh.)
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import subprocess
import sys
import zipfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UTILS = "ansible_collections/accelops/lifecycle/plugins/module_utils/"


def payload(module_common, modules_dir, name):
    """(the zip's bytes, {file below module_utils: size}) of module ``name``."""
    with open(os.path.join(modules_dir, name + ".py"), "rb") as f:
        source = f.read()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        module_common.recursive_finder(name, "ansible_collections.accelops.lifecycle.plugins.modules." + name, source,
                                       zf, datetime.datetime.now(datetime.timezone.utc),
                                       module_common._builder.ExtensionManager.create(task_vars={}))
        ours = dict((i.filename[len(UTILS):], i.file_size) for i in zf.infolist()
                    if i.filename.startswith(UTILS) and i.filename != UTILS + "__init__.py")
    return out.getvalue(), ours


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--collections", help="the directory that holds ansible_collections/ (default: stage this checkout)")
    ap.add_argument("--files", action="store_true", help="list each module's files")
    args = ap.parse_args()
    root = args.collections or subprocess.run([os.path.join(TOP, "tools", "stage.sh"), os.path.join(TOP, ".build", "payloads")],
                                              check=True, stdout=subprocess.PIPE, text=True).stdout.strip().rsplit(
                                                  "/ansible_collections/", 1)[0]
    from ansible.plugins.loader import init_plugin_loader
    init_plugin_loader([root])
    from ansible.executor import module_common
    modules_dir = os.path.join(root, "ansible_collections", "accelops", "lifecycle", "plugins", "modules")
    print("%-28s %5s %9s %9s" % ("module", "files", "files KB", "zip KB"))
    for name in sorted(n[:-3] for n in os.listdir(modules_dir) if n.endswith(".py") and not n.startswith("_")):
        data, ours = payload(module_common, modules_dir, name)
        print("%-28s %5d %9.1f %9.1f" % (name, len(ours), sum(ours.values()) / 1024.0, len(data) / 1024.0))
        if args.files:
            print("    " + " ".join(sorted(f[:-3] for f in ours)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
