# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The sysfs layer's batch helpers answer exactly as the one-at-a-time ones (discovery's hot path uses them)."""

from __future__ import annotations

import errno
import os

from ansible_collections.accelops.lifecycle.plugins.module_utils import _pci
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import (
    ATTR_LIMIT,
    isdir_real,
    read_attr_real,
    read_attrs_real,
    readlink_real,
    readlinks_real,
)


def _tree(tmp_path):
    d = tmp_path / "dev"
    d.mkdir()
    (d / "plain").write_text("0x10de\n")
    (d / "empty").write_text("")
    (d / "page").write_text("x" * ATTR_LIMIT)
    (d / "long").write_text("x" * (ATTR_LIMIT + 1))
    (d / "binary").write_bytes(b"\xff\xfe\n")
    (d / "subdir").mkdir()
    os.symlink("plain", str(d / "link"))
    os.symlink("nowhere", str(d / "dangling"))
    os.symlink("loop", str(d / "loop"))
    os.symlink("subdir", str(d / "dirlink"))
    return str(d)


NAMES = ("plain", "empty", "page", "long", "binary", "subdir", "link", "dangling", "loop", "dirlink", "missing")


def test_read_attrs_real_is_read_attr_real_per_name(tmp_path):
    d = _tree(tmp_path)
    got = read_attrs_real(d + "/", NAMES)
    assert got == [read_attr_real(d + "/" + n) for n in NAMES]
    byname = dict(zip(NAMES, got))
    assert byname["plain"] == ("0x10de", None)
    assert byname["long"] == (None, errno.EFBIG)
    assert byname["binary"] == (None, errno.EILSEQ)
    assert byname["missing"] == (None, errno.ENOENT)
    assert byname["loop"] == (None, errno.ELOOP)
    assert read_attrs_real(d + "/", ()) == []


def test_readlinks_real_is_readlink_real_per_name(tmp_path):
    d = _tree(tmp_path)
    got = readlinks_real(d + "/", NAMES)
    assert got == [readlink_real(d + "/" + n) for n in NAMES]
    assert dict(zip(NAMES, got))["dangling"] == "nowhere"
    assert dict(zip(NAMES, got))["plain"] is None


def test_the_batch_helpers_answer_as_one_at_a_time_whatever_the_directory_is(tmp_path):
    """They look the directory up once and read each name relative to it: a directory reached through a link, a
    missing one, a file, a dangling link or a FIFO where the directory should be answer as a lookup per name does."""
    d = _tree(tmp_path)
    os.symlink(d, str(tmp_path / "bus-link"))
    (tmp_path / "a-file").write_text("x\n")
    os.symlink("nowhere", str(tmp_path / "dangling-dir"))
    os.mkfifo(str(tmp_path / "fifo-dir"))
    os.mkfifo(d + "/fifo")
    names = NAMES + ("fifo", "subdir/deeper")
    for base in ("bus-link", "missing-dir", "a-file", "dangling-dir", "fifo-dir"):
        b = str(tmp_path / base) + "/"
        assert read_attrs_real(b, names) == [read_attr_real(b + n) for n in names], base
        assert readlinks_real(b, names) == [readlink_real(b + n) for n in names], base
    assert read_attrs_real(str(tmp_path / "bus-link") + "/", ("plain", "fifo")) == [("0x10de", None), ("", None)]
    assert read_attrs_real(str(tmp_path / "a-file") + "/", ("plain",)) == [(None, errno.ENOTDIR)]


def test_isdir_real_is_os_path_isdir(tmp_path):
    d = _tree(tmp_path)
    for n in NAMES:
        assert isdir_real(d + "/" + n) == os.path.isdir(d + "/" + n), n
    assert isdir_real(d) and not isdir_real(d + "/missing/deeper")


def test_identity_warnings_keep_the_record_key_order(tmp_path):
    """identity() reads its attributes in one batch; the warnings still come in the record's key order."""
    d = tmp_path / "fn"
    d.mkdir()
    for name in ("revision", "subsystem_device", "numa_node", "current_link_speed", "local_cpulist", "sriov_totalvfs"):
        (d / name).write_bytes(b"\xff")
    (d / "sriov_numvfs").write_text("1\n")
    for name, value in (("vendor", "0x10de"), ("device", "0x1eb8"), ("class", "0x030200")):
        (d / name).write_text(value + "\n")
    f = _pci.PciFunction("0000:3b:00.0", str(d))
    ident = f.identity()
    assert ident["revision"] is None and ident["link"] is None and ident["sriov"]["vfs"] == []
    assert f.warnings == [
        "revision: not UTF-8 text",
        "subsystem_device: not UTF-8 text",
        "numa_node: not UTF-8 text",
        "current_link_speed: not UTF-8 text",
        "sriov_totalvfs: not UTF-8 text",
        "local_cpulist: not UTF-8 text",
    ]
