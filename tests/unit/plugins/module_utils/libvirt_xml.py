# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""libvirt's own checks of hostdev snippets, for the hostdev tests.

Two independent checks, both with libvirt's Debian packages (libvirt-clients, libxml2-utils; the Makefile
installs them): RelaxNG validation of the bare ``<hostdev>`` against libvirt's domain schema (xmllint), and
defining a domain that contains it in libvirt's test driver (``virsh -c test:///default``), whose
``dumpxml`` must show the snippet unchanged. A missing tool fails the test that needs it (never a skip).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

SCHEMAS = "/usr/share/libvirt/schemas"
# ansible-test runs units with a reduced environment: look in the system directories too.
_SEARCH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin"])
DOMAIN_NAME = "hostdev-check"


def tool(name, package):
    path = shutil.which(name, path=_SEARCH)
    if not path:
        pytest.fail("%s not found (Debian package %s; the Makefile installs it): the hostdev tests need it"
                    % (name, package))
    return path


def _env(tmp):
    return {"PATH": _SEARCH, "LC_ALL": "C", "HOME": str(tmp), "XDG_CACHE_HOME": str(tmp),
            "XDG_CONFIG_HOME": str(tmp), "XDG_RUNTIME_DIR": str(tmp)}


def relaxng_errors(snippets, tmp):
    """xmllint's messages for the snippets that do not validate as libvirt ``<hostdev>`` elements ([] = valid)."""
    xmllint = tool("xmllint", "libxml2-utils")
    overrides = os.path.join(SCHEMAS, "domainoverrides.rng")
    if not os.path.isfile(overrides):
        pytest.fail("%s not found (Debian package libvirt0, pulled in by libvirt-clients)" % overrides)
    grammar = tmp / "hostdev.rng"
    grammar.write_text('<?xml version="1.0"?>\n'
                       '<grammar xmlns="http://relaxng.org/ns/structure/1.0" '
                       'datatypeLibrary="http://www.w3.org/2001/XMLSchema-datatypes">\n'
                       '  <start><ref name="hostdev"/></start>\n'
                       '  <include href="%s"/>\n'
                       '</grammar>\n' % overrides)
    files = []
    for index, snippet in enumerate(snippets):
        path = tmp / ("snippet-%d.xml" % index)
        path.write_text(snippet + "\n")
        files.append(str(path))
    proc = subprocess.run([xmllint, "--noout", "--relaxng", str(grammar)] + files, env=_env(tmp),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False)
    if "failed to compile" in proc.stderr:
        pytest.fail("libvirt's schema did not compile: %s" % proc.stderr)
    if proc.returncode == 0:
        return []
    return [line for line in proc.stderr.splitlines() if "validates" not in line]


def assert_valid(snippets, tmp):
    errors = relaxng_errors(snippets, tmp)
    assert errors == [], "\n".join(errors)


def define(snippets, tmp):
    """Define a test-driver domain with ``snippets`` as its devices; (its dumpxml, virsh's error output)."""
    virsh = tool("virsh", "libvirt-clients")
    domain = tmp / "domain.xml"
    domain.write_text("<domain type='test'>\n  <name>%s</name>\n  <memory unit='MiB'>64</memory>\n"
                      "  <os><type arch='x86_64'>hvm</type></os>\n  <devices>\n%s\n  </devices>\n</domain>\n"
                      % (DOMAIN_NAME, "\n".join(snippets)))
    proc = subprocess.run([virsh, "-q", "-c", "test:///default", "define %s; dumpxml %s" % (domain, DOMAIN_NAME)],
                          env=_env(tmp), stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          check=False)
    # virsh returns 0 for a command string even when one of its commands failed: errors are on stderr.
    return proc.stdout, proc.stderr.strip()


def hostdevs_of(dumpxml):
    """The ``<hostdev>`` elements of a dumpxml, dedented to column 0."""
    blocks = re.findall(r"^( *)(<hostdev .*?</hostdev>)$", dumpxml, re.S | re.M)
    out = []
    for indent, block in blocks:
        lines = block.split("\n")
        out.append("\n".join(lines[:1] + [line[len(indent):] if line.startswith(indent) else line
                                          for line in lines[1:]]))
    return out


def assert_libvirt_keeps(snippets, tmp):
    """libvirt's test driver accepts a domain with the snippets and formats each of them back unchanged."""
    out, err = define(snippets, tmp)
    assert err == "", err
    assert hostdevs_of(out) == list(snippets), out
