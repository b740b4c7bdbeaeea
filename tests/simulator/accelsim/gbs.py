"""Bitstream files for the FPGA tool fakes.

Intel GBS (green bitstream) as the OPAE tools read it: a 16-byte GUID (``XeonFPGA`` 0xB7 ``GBSv001``),
a little-endian 32-bit metadata length, the JSON metadata, then the raw bitstream. The metadata names
the PR interface the AFU was built against (``afu-image.interface-uuid``) and the AFU
(``afu-image.accelerator-clusters[0].accelerator-type-uuid``).

Xilinx xclbin as XRT writes it (``struct axlf`` of XRT's xclbin.h, little-endian): ``xclbin2\0``, the signature
length, reserved bytes, the key block, a unique id, then ``struct axlf_header`` with the file's length, time stamps,
version, mode, the shell's ``m_interface_uuid``, ``m_platformVBNV``, the xclbin's ``uuid`` and the section count.
No sections are written (nothing here reads them); the header is the real one, so that the collection reads the
simulator's files the way it reads a real xclbin.
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


# struct axlf: magic[8], int32 m_signature_length, reserved[28], m_keyBlock[256], uint64 m_uniqueId; then
# struct axlf_header: uint64 m_length, m_timeStamp, m_featureRomTimeStamp; uint16 m_versionPatch; uint8 m_versionMajor,
# m_versionMinor; uint16 m_mode, m_actionMask; m_interface_uuid[16]; m_platformVBNV[64]; uuid[16]; m_debug_bin[16];
# uint32 m_numSections; padding[4]
_AXLF_TOP = struct.Struct("<8si28s256sQ")
_AXLF_HEADER = struct.Struct("<QQQHBBHH16s64s16s16sI4s")


def make_xclbin(path, interface_uuid, xclbin_uuid, platform="xilinx_u250_gen3x16_base_4"):
    size = _AXLF_TOP.size + _AXLF_HEADER.size
    top = _AXLF_TOP.pack(XCLBIN_MAGIC, -1, b"\xff" * 28, b"\0" * 256, 0)
    header = _AXLF_HEADER.pack(size, 1700000000, 0, 0, 2, 1, 0, 0, uuidlib.UUID(interface_uuid).bytes,
                               platform.encode(), uuidlib.UUID(xclbin_uuid).bytes, b"", 0, b"")
    with open(path, "wb") as f:
        f.write(top + header)
    return path


def read_xclbin(path):
    """(interface_uuid, xclbin_uuid, header) of an xclbin, the ids dashed; ValueError when it is not one."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != XCLBIN_MAGIC:
        raise ValueError("not an xclbin2 file")
    if len(data) < _AXLF_TOP.size + _AXLF_HEADER.size:
        raise ValueError("xclbin header is invalid")
    h = _AXLF_HEADER.unpack_from(data, _AXLF_TOP.size)
    header = {"length": h[0], "interface_uuid": str(uuidlib.UUID(bytes=h[8])),
              "platform_vbnv": h[9].split(b"\0", 1)[0].decode("utf-8", "replace"), "uuid": str(uuidlib.UUID(bytes=h[10]))}
    return header["interface_uuid"], header["uuid"], header
