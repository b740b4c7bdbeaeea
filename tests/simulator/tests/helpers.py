"""Helpers for the simulator tests."""

import errno
import os

import pytest

PCI_IDS = "/usr/share/misc/pci.ids"


def write(path, value):
    """Write like the host modules do: one write() call; returns None or raises OSError."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode() if isinstance(value, str) else value)
    finally:
        os.close(fd)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def expect_errno(code, func, *args):
    with pytest.raises(OSError) as info:
        func(*args)
    assert info.value.errno == code, "expected %s, got %s" % (errno.errorcode[code], info.value)


def pci_ids():
    """{vendor: name}, {(vendor, device): name}, {(vendor, device, sv, sd): name}, classes {cc: name}."""
    vendors, devices, subsystems, classes = {}, {}, {}, {}
    cur = dev = None
    in_classes = False
    with open(PCI_IDS, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("C "):
                in_classes = True
                cur = line.split()[1]
                classes[cur] = line.split(None, 2)[2].strip()
                continue
            if in_classes:
                if line.startswith("\t") and not line.startswith("\t\t"):
                    sub, name = line.strip().split(None, 1)
                    classes[cur + sub] = name
                continue
            if line.startswith("\t\t"):
                sv, sd, name = line.strip().split(None, 2)
                subsystems[(cur, dev, sv, sd)] = name
            elif line.startswith("\t"):
                dev, name = line.strip().split(None, 1)
                devices[(cur, dev)] = name
            else:
                cur, name = line.strip().split(None, 1)
                vendors[cur] = name
                dev = None
    return vendors, devices, subsystems, classes
