"""Bitstream files for the FPGA tool fakes.

Intel GBS (green bitstream) as the OPAE tools read it: a 16-byte GUID (``XeonFPGA`` 0xB7 ``GBSv001``),
a little-endian 32-bit metadata length, the JSON metadata, then the raw bitstream. The metadata names
the PR interface the AFU was built against (``afu-image.interface-uuid``) and the AFU
(``afu-image.accelerator-clusters[0].accelerator-type-uuid``).

Xilinx xclbin, simplified: the real ``xclbin2`` magic, then a little-endian 32-bit header length and a
JSON header with ``uuid`` (the xclbin's), ``interface_uuid`` (the shell it targets) and
``platform_vbnv``; the real format's binary section table is not modelled.
"""

import json
import struct
import uuid as uuidlib

GBS_GUID = b"XeonFPGA\xb7GBSv001"
XCLBIN_MAGIC = b"xclbin2\0"


def _dashed(hexid):
    return str(uuidlib.UUID(hex=hexid.replace("-", "")))


def make_gbs(path, interface_id, afu_id, name="sim_afu", platform="PAC_A10", payload=b"\0" * 64):
    meta = {
        "version": 640,
        "platform-name": platform,
        "afu-image": {
            "magic-no": 488605312,
            "interface-uuid": _dashed(interface_id),
            "clock-frequency-high": "auto",
            "clock-frequency-low": "auto",
            "power": 0,
            "accelerator-clusters": [{"name": name, "total-contexts": 1, "accelerator-type-uuid": _dashed(afu_id)}],
        },
    }
    blob = json.dumps(meta).encode()
    with open(path, "wb") as f:
        f.write(GBS_GUID + struct.pack("<I", len(blob)) + blob + payload)
    return path


def read_gbs(path):
    """(interface_id, afu_id, metadata) of a GBS file, ids as 32 lowercase hex digits; ValueError if the
    file is not a GBS."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 20 or data[:16] != GBS_GUID:
        raise ValueError("not a GBS file (bad GUID)")
    (length,) = struct.unpack_from("<I", data, 16)
    try:
        meta = json.loads(data[20:20 + length].decode())
        image = meta["afu-image"]
        iface = image["interface-uuid"].replace("-", "").lower()
        afu = image["accelerator-clusters"][0]["accelerator-type-uuid"].replace("-", "").lower()
    except (ValueError, KeyError, IndexError, TypeError):
        raise ValueError("GBS metadata is invalid") from None
    return iface, afu, meta


def make_xclbin(path, interface_uuid, xclbin_uuid, platform="xilinx_u250_gen3x16_base_4"):
    header = json.dumps({"uuid": str(uuidlib.UUID(xclbin_uuid)), "interface_uuid": str(uuidlib.UUID(interface_uuid)),
                         "platform_vbnv": platform}).encode()
    with open(path, "wb") as f:
        f.write(XCLBIN_MAGIC + struct.pack("<I", len(header)) + header)
    return path


def read_xclbin(path):
    """(interface_uuid, xclbin_uuid, header) of an xclbin; ValueError when it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != XCLBIN_MAGIC or len(data) < 12:
        raise ValueError("not an xclbin2 file")
    (length,) = struct.unpack_from("<I", data, 8)
    try:
        header = json.loads(data[12:12 + length].decode())
        return str(uuidlib.UUID(header["interface_uuid"])), str(uuidlib.UUID(header["uuid"])), header
    except (ValueError, KeyError, TypeError):
        raise ValueError("xclbin header is invalid") from None
