# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Everything the target checks about a snippet directory, read in one process (one task instead of a find, a
stat, a slurp per file and three commands): ``inspect_snippets.py DIR RNG DOMAIN_XML DOMAIN_NAME``.

Prints JSON: ``dir_mode``; ``files`` (sorted by path: ``name``, ``mode`` as '0640', ``content``); ``xmllint``
(``rc``, ``stderr``: every file validated against the RelaxNG grammar RNG); ``virsh`` (``rc``, ``stdout``,
``stderr``: a domain holding every snippet, written to DOMAIN_XML, defined in libvirt's test driver and dumped
back). The assertions stay in the target's tasks.
"""

import json
import os
import stat
import subprocess
import sys

DOMAIN = """<domain type='test'>
  <name>%s</name>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
%s
  </devices>
</domain>
"""


def run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, check=False)
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def main(directory, rng, domain_xml, domain_name):
    paths = sorted(os.path.join(directory, n) for n in os.listdir(directory)
                   if stat.S_ISREG(os.lstat(os.path.join(directory, n)).st_mode))
    files = []
    for p in paths:
        with open(p, encoding="utf-8") as f:
            files.append({"name": os.path.basename(p), "mode": "%04o" % stat.S_IMODE(os.stat(p).st_mode),
                          "content": f.read()})
    out = {"dir_mode": "%04o" % stat.S_IMODE(os.stat(directory).st_mode), "files": files}
    # xmllint with no file to read would wait on stdin: run it only when there are files (the tasks assert there are)
    out["xmllint"] = run(["xmllint", "--noout", "--relaxng", rng] + paths) if paths else {"rc": None, "stderr": ""}
    with open(domain_xml, "w", encoding="utf-8") as f:
        f.write(DOMAIN % (domain_name, "".join(x["content"] for x in files)))
    out["virsh"] = run(["virsh", "-q", "-c", "test:///default", "define %s; dumpxml %s" % (domain_xml, domain_name)])
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:5])
