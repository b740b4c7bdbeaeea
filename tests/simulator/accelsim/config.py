"""PCI configuration space headers for the ``config`` attribute (what lspci reads through linux-sysfs)."""

import struct

_SPEEDS = {"2.5": 1, "5.0": 2, "8.0": 3, "16.0": 4, "32.0": 5, "64.0": 6}


def _speed_code(text):
    return _SPEEDS.get(str(text).split()[0], 1)


def config_header(st, bridge_buses=None, multifunction=False, size=256):
    """A 256-byte configuration space: the standard type 0 (or type 1 for bridges) header and, for
    PCIe functions, a PCI Express capability at 0x40 carrying the link speed and width."""
    buf = bytearray(size)
    cls = st["class"]
    is_bridge = (cls >> 8) == 0x0604
    struct.pack_into("<HH", buf, 0, st["vendor"], st["device"])
    struct.pack_into("<H", buf, 0x04, 0x0406)  # memory space, bus master, INTx disable
    status = 0x0010 if st.get("link") else 0x0000  # capability list present
    struct.pack_into("<H", buf, 0x06, status)
    buf[0x08] = st["revision"] & 0xFF
    buf[0x09] = cls & 0xFF
    buf[0x0A] = (cls >> 8) & 0xFF
    buf[0x0B] = (cls >> 16) & 0xFF
    header_type = 0x01 if is_bridge else 0x00
    buf[0x0E] = header_type | (0x80 if multifunction else 0)
    if is_bridge:
        primary, secondary, subordinate = bridge_buses or (0, 0, 0)
        buf[0x18], buf[0x19], buf[0x1A] = primary, secondary, subordinate
    else:
        struct.pack_into("<HH", buf, 0x2C, st["subsystem_vendor"], st["subsystem_device"])
    buf[0x3C] = st.get("irq", 0) & 0xFF
    buf[0x3D] = 0x01 if not st.get("is_vf") else 0x00
    if st.get("link"):
        buf[0x34] = 0x40
        port_type = 0x4 if is_bridge else 0x0
        buf[0x40] = 0x10  # PCI Express capability
        buf[0x41] = 0x00
        struct.pack_into("<H", buf, 0x42, 0x0002 | (port_type << 4))
        link = st["link"]
        lnkcap = _speed_code(link["max_speed"]) | (int(link["max_width"]) << 4)
        struct.pack_into("<I", buf, 0x4C, lnkcap)
        lnksta = _speed_code(link["speed"]) | (int(link["width"]) << 4)
        struct.pack_into("<H", buf, 0x52, lnksta)
    return bytes(buf)
