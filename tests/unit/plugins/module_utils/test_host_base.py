# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host base: the root option, path mapping and kernel errno turned into clear messages."""

from __future__ import annotations

import errno
import json
import os

import pytest

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.testing import patch_module_args
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import host_argument_spec, host_sysfs
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs, SysfsError


def _host_sysfs(args):
    with patch_module_args(args):
        return host_sysfs(AnsibleModule(argument_spec=host_argument_spec(), supports_check_mode=True))


def test_root_maps_every_host_path(tmp_path):
    fs = Sysfs(root=str(tmp_path))
    assert fs.real("/sys/bus/pci/devices") == str(tmp_path / "sys/bus/pci/devices")
    assert fs.real("/proc/1/fd") == str(tmp_path / "proc/1/fd")
    assert fs.real("/run/libvirt/qemu") == str(tmp_path / "run/libvirt/qemu")
    assert fs.host(str(tmp_path / "sys/kernel/iommu_groups/4")) == "/sys/kernel/iommu_groups/4"
    assert Sysfs().real("/sys/class") == "/sys/class"


def test_separate_roots_override(tmp_path):
    fs = Sysfs(root="/", sys_root=str(tmp_path / "s"), proc_root=str(tmp_path / "p"))
    assert fs.real("/sys/x") == str(tmp_path / "s/x")
    assert fs.real("/proc/self") == str(tmp_path / "p/self")
    assert fs.real("/dev/vfio") == "/dev/vfio"


def test_dotdot_cannot_escape_the_root(tmp_path):
    fs = Sysfs(root=str(tmp_path))
    assert fs.real("/sys/../../etc/passwd") == str(tmp_path / "etc/passwd")


def test_reads_strip_newline_and_default(tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys/vendor").write_text("0x10de\n")
    fs = Sysfs(root=str(tmp_path))
    assert fs.read("/sys/vendor") == "0x10de"
    assert fs.read_optional("/sys/missing") is None
    assert fs.read("/sys/missing", default="") == ""
    with pytest.raises(SysfsError, match="read /sys/missing failed"):
        fs.read("/sys/missing")


def test_links_and_listing(tmp_path):
    (tmp_path / "sys/bus/pci/drivers/vfio-pci").mkdir(parents=True)
    (tmp_path / "sys/dev").mkdir()
    os.symlink("../bus/pci/drivers/vfio-pci", str(tmp_path / "sys/dev/driver"))
    os.symlink("nowhere", str(tmp_path / "sys/dev/dangling"))
    fs = Sysfs(root=str(tmp_path))
    assert fs.link_name("/sys/dev/driver") == "vfio-pci"
    assert fs.resolve("/sys/dev/driver") == "/sys/bus/pci/drivers/vfio-pci"
    assert fs.resolve("/sys/dev/dangling") is None
    assert fs.listdir("/sys/dev") == ["dangling", "driver"]
    assert fs.listdir("/sys/none") == []


def test_write_errno_names_the_reason(tmp_path):
    with pytest.raises(SysfsError) as e:
        Sysfs(root=str(tmp_path)).write("/sys/absent", "1")
    assert e.value.errno == errno.ENOENT
    assert "/sys/absent" in str(e.value) and "does not exist" in str(e.value)
    err = SysfsError("write '5' to", "/sys/bus/pci/devices/x/sriov_numvfs", OSError(errno.EBUSY, "Device or resource busy"))
    assert "reset to 0 first" in str(err)


def test_write_is_one_call(tmp_path):
    (tmp_path / "sys").mkdir()
    (tmp_path / "sys/attr").write_text("")
    Sysfs(root=str(tmp_path)).write("/sys/attr", "8")
    assert (tmp_path / "sys/attr").read_text() == "8"


def test_host_sysfs_uses_the_root_option(tmp_path):
    fs = _host_sysfs({"root": str(tmp_path)})
    assert fs.root == str(tmp_path)


@pytest.mark.parametrize("root,expect", [("relative/dir", "must be an absolute path"), ("/nonexistent/x", "is not a directory")])
def test_bad_root_fails_naming_the_option(root, expect, capsys):
    with pytest.raises(SystemExit):
        _host_sysfs({"root": root})
    result = json.loads(capsys.readouterr().out)
    assert result["failed"] is True and result["msg"].startswith("root ") and expect in result["msg"]
