# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""FPGA programming engine (the ``fpga_program`` module): bitstreams, targets, plans, boot persistence.

Flow (docs/fpga.md):

1. :func:`stage_bitstream` resolves the path (symlinks reported), refuses anything but a regular file,
   copies the bytes into a private directory while hashing them and compares the pinned sha256; the tool
   is later handed *that copy*, so what was verified is what is loaded.
2. :func:`parse_bitstream` reads the interface id and the function id the file carries (Intel GBS
   metadata JSON; Xilinx xclbin ``axlf`` header, or the simulator's simplified xclbin).
3. :func:`locate` finds the card through discovery (:mod:`_discovery`) and describes the target: the
   vendor tool's command line, where the function is read back, which units must be idle.
4. :func:`build_plan` turns (target, bitstream, options) into a :class:`_plan.Plan`; check mode, diff
   mode and the real run all come from that one plan.
5. :func:`plan_program` is the ``fpga_program`` module's plan hook: the steps above with the refusals (in use,
   tool missing), the boot files (:class:`BootUnit`, written through :mod:`_persist`) and the read-back after
   the run; :mod:`_hostmodule` runs it (execution, rollback, audit, result).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import struct
import tempfile

from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery, _inuse
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, Program
from ansible_collections.accelops.lifecycle.plugins.module_utils._pci import normalize_address
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import UNIT_DIR, make_dirs, shell_quote, unit_basename
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError
from ansible_collections.accelops.lifecycle.plugins.module_utils._tools import ToolError, find_tool, not_installed

__metaclass__ = type

GBS_GUID = b"XeonFPGA\xb7GBSv001"
XCLBIN_MAGIC = b"xclbin2\0"
# struct axlf: magic[8], int32 signature length, reserved[28], keyBlock[256], uint64 uniqueId -> header
_AXLF_HEADER = 8 + 4 + 28 + 256 + 8
_AXLF_INTERFACE = _AXLF_HEADER + 32      # axlf_header.m_interface_uuid[16]
_AXLF_VBNV = _AXLF_HEADER + 48           # axlf_header.m_platformVBNV[64]
_AXLF_UUID = _AXLF_HEADER + 112          # axlf_header.uuid[16]
_AXLF_MIN = _AXLF_HEADER + 152
HEADER_LIMIT = 1 << 20                   # metadata is read from the first MiB at most
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
HEX_ID_RE = re.compile(r"^[0-9a-f]{32}$")
STATE_DIR = "/var/lib/accelops/fpga"
BOOT_RETRIES = 3
BOOT_RETRY_DELAY = 10


class FpgaError(Refusal):
    """A refusal or failure with an operator-readable message (the module fails with it); ``extra``: result keys."""


# -- ids -------------------------------------------------------------------------------------------
def normalize_id(value):
    """A UUID-like id as 32 lower-case hex digits ('0x', dashes, braces and case removed); None for
    None/empty; the cleaned text (not 32 digits) when it is not one, so that comparisons still fail."""
    if value is None:
        return None
    v = ("%s" % value).strip().lower()
    if v.startswith("0x"):
        v = v[2:]
    v = v.replace("-", "").strip("{}")
    return v or None


def dashed(hexid):
    """32 hex digits as 8-4-4-4-12 (how the tools print UUIDs); other text unchanged."""
    h = normalize_id(hexid)
    if h and HEX_ID_RE.match(h):
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    return hexid


def _zero(hexid):
    return not hexid or set(hexid) <= {"0"}


# -- bitstreams --------------------------------------------------------------------------------------
def parse_bitstream(data):
    """What a bitstream's header says: ``{format, interface_id, function_id, name, platform}`` with ids as
    32 hex digits. ``data`` is the file's first bytes (the header; a MiB is plenty). Raises
    :class:`FpgaError` when the format is not recognised or the metadata is broken."""
    if data[:16] == GBS_GUID:
        return _parse_gbs(data)
    if data[:8] == XCLBIN_MAGIC:
        return _parse_xclbin(data)
    raise FpgaError("not a bitstream this module knows: neither an Intel GBS (GUID XeonFPGA\\xb7GBSv001) "
                    "nor a Xilinx xclbin (magic xclbin2)")


def _parse_gbs(data):
    if len(data) < 20:
        raise FpgaError("GBS file is truncated: no metadata length after the GUID")
    (length,) = struct.unpack_from("<I", data, 16)
    if length == 0 or 20 + length > len(data):
        raise FpgaError("GBS metadata length %d does not fit the file's header" % length)
    try:
        meta = json.loads(data[20:20 + length].decode("utf-8"))
        image = meta["afu-image"]
        iface = normalize_id(image["interface-uuid"])
        cluster = image["accelerator-clusters"][0]
        afu = normalize_id(cluster["accelerator-type-uuid"])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
        raise FpgaError("GBS metadata is not valid (afu-image.interface-uuid and "
                        "afu-image.accelerator-clusters[0].accelerator-type-uuid are needed): %s" % e)
    for label, v in (("interface-uuid", iface), ("accelerator-type-uuid", afu)):
        if not v or not HEX_ID_RE.match(v):
            raise FpgaError("GBS metadata %s is not a UUID: %r" % (label, v))
    return {"format": "gbs", "interface_id": iface, "function_id": afu,
            "name": cluster.get("name") if isinstance(cluster, dict) else None,
            "platform": meta.get("platform-name") if isinstance(meta, dict) else None}


def _parse_xclbin(data):
    # accelsim's simplified xclbin: magic, uint32 length, JSON header (uuid, interface_uuid, platform_vbnv)
    if len(data) >= 13 and data[12:13] == b"{":
        (length,) = struct.unpack_from("<I", data, 8)
        try:
            hdr = json.loads(data[12:12 + length].decode("utf-8"))
            iface, xid = normalize_id(hdr["interface_uuid"]), normalize_id(hdr["uuid"])
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise FpgaError("xclbin JSON header is not valid: %s" % e)
        platform = hdr.get("platform_vbnv")
    else:
        if len(data) < _AXLF_MIN:
            raise FpgaError("xclbin is truncated: %d bytes, the axlf header needs %d" % (len(data), _AXLF_MIN))
        iface = data[_AXLF_INTERFACE:_AXLF_INTERFACE + 16].hex()
        xid = data[_AXLF_UUID:_AXLF_UUID + 16].hex()
        platform = data[_AXLF_VBNV:_AXLF_VBNV + 64].split(b"\0", 1)[0].decode("utf-8", "replace") or None
    for label, v in (("interface uuid", iface), ("uuid", xid)):
        if not v or not HEX_ID_RE.match(v) or _zero(v):
            raise FpgaError("xclbin %s is missing or not a UUID: %r" % (label, v))
    return {"format": "xclbin", "interface_id": iface, "function_id": xid, "name": None, "platform": platform}


def stage_bitstream(path, sha256, workdir, label="bitstream"):
    """Verify ``path`` and copy it into ``workdir`` (a private directory). Returns a dict: ``path`` (as
    given), ``resolved`` (after symlinks), ``symlink`` (bool), ``size``, ``sha256``, ``staged`` (the copy the
    tool gets) plus the parsed header (:func:`parse_bitstream`). Raises :class:`FpgaError`."""
    want = ("%s" % (sha256 or "")).strip().lower()
    if want.startswith("sha256:"):
        want = want[7:]
    if not SHA256_RE.match(want):
        raise FpgaError("%s_sha256 must be 64 hex digits (the sha256 of the file); got %r" % (label, sha256)
                        if label != "bitstream" else
                        "sha256 must be 64 hex digits (the sha256 of the bitstream file); got %r" % (sha256,))
    if not path or not os.path.isabs(path):
        raise FpgaError("%s must be an absolute path; got %r" % (label, path))
    resolved = os.path.realpath(path)
    info = {"path": path, "resolved": resolved, "symlink": resolved != os.path.normpath(path)}
    try:
        st = os.stat(resolved)
    except OSError as e:
        raise FpgaError("%s %s%s: %s" % (label, path, _via(info), e.strerror or e))
    if not stat.S_ISREG(st.st_mode):
        raise FpgaError("%s %s%s is not a regular file (%s); only plain files are loaded"
                        % (label, path, _via(info), _kind(st.st_mode)))
    fd, staged = tempfile.mkstemp(prefix="bitstream-", dir=workdir)
    digest = hashlib.sha256()
    head = b""
    size = 0
    try:
        # O_NOFOLLOW on the resolved path: a link swapped in after realpath() is refused, not followed.
        src = os.open(resolved, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        try:
            sst = os.fstat(src)
            if not stat.S_ISREG(sst.st_mode):
                raise FpgaError("%s %s%s is not a regular file (%s)" % (label, path, _via(info), _kind(sst.st_mode)))
            while True:
                chunk = os.read(src, 1 << 20)
                if not chunk:
                    break
                digest.update(chunk)
                if len(head) < HEADER_LIMIT:
                    head += chunk[:HEADER_LIMIT - len(head)]
                os.write(fd, chunk)
                size += len(chunk)
        finally:
            os.close(src)
    except OSError as e:
        os.close(fd)
        os.unlink(staged)
        raise FpgaError("%s %s%s cannot be read: %s" % (label, path, _via(info), e.strerror or e))
    except FpgaError:
        os.close(fd)
        os.unlink(staged)
        raise
    os.close(fd)
    os.chmod(staged, 0o400)
    got = digest.hexdigest()
    info.update(size=size, sha256=got, staged=staged)
    if got != want:
        os.unlink(staged)
        raise FpgaError("%s %s%s: sha256 is %s, not the pinned %s; nothing was loaded"
                        % (label, path, _via(info), got, want), bitstream=_public(info))
    try:
        info.update(parse_bitstream(head))
    except FpgaError as e:
        raise FpgaError("%s %s%s: %s" % (label, path, _via(info), e), bitstream=_public(info))
    return info


def _public(info):
    return dict((k, v) for k, v in info.items() if k != "staged")


def _via(info):
    return " (-> %s)" % info["resolved"] if info.get("symlink") else ""


def _kind(mode):
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "mode %o" % mode


# -- the target -----------------------------------------------------------------------------------
class Target(object):
    """One programmable thing: an Intel port (dynamic region) or a whole Alveo card (single program)."""

    def __init__(self, address, vendor, model, layout, port, tool, record):
        self.address = address          # the card's address as the record names it
        self.vendor = vendor            # intel | xilinx
        self.model = model              # dynamic | single
        self.layout = layout            # opae | dfl | xrt
        self.port = port                # Intel: the port's sysfs name; Xilinx: None
        self.tool = tool                # fpgaconf | xbmgmt
        self.record = record
        self.interface_ids = []         # what the region/shell accepts (hex)
        self.function_path = None       # host path of the attribute that names the loaded function
        self.function_glob = None       # the same, as a pattern that survives renumbering at boot
        self.management = None          # Xilinx: the management PF
        self.slots = []                 # units that get the function (all of a single-program card)
        self.related = []               # addresses whose users make the target busy
        self.port_nodes = []            # Intel: /dev nodes of the port

    @property
    def name(self):
        return "%s %s" % (self.address, self.port) if self.port else self.address

    def describe(self):
        return {"address": self.address, "vendor": self.vendor, "programming_model": self.model,
                "layout": self.layout, "port": self.port, "management_address": self.management,
                "interface_ids": list(self.interface_ids), "slots": list(self.slots),
                "function_path": self.function_path}


def discover_card(sysfs, address):
    """The discovery record of the FPGA card at ``address`` (either PF of an Alveo card)."""
    addr = normalize_address(address)
    if addr is None:
        raise FpgaError("address must be a PCI address such as 0000:5e:00.0 or 5e:00.0; got %r" % (address,))
    if not sysfs.exists("/sys/bus/pci/devices/%s" % addr):
        raise FpgaError("%s: no such PCI device on this host (nothing in /sys/bus/pci/devices)" % addr)
    result = _discovery.discover(sysfs, families=["fpga"], addresses=[addr], nvidia_smi="never")
    recs = result["accelerators"]
    for rec in recs:
        fp = rec.get("fpga") or {}
        if addr in (rec["address"], fp.get("management_address")):
            if rec.get("physfn"):
                raise FpgaError("%s is a virtual function of %s; program the FPGA through its PF %s"
                                % (addr, rec["physfn"], rec["physfn"]))
            return rec, result
    raise FpgaError("%s is not an FPGA this module can program (not an Intel FPGA or Xilinx Alveo card "
                    "with its driver bound)" % addr)


def locate(sysfs, address, port=None):
    """Describe the programmable target at ``address`` (and ``port`` for Intel cards)."""
    rec, result = discover_card(sysfs, address)
    fp = rec["fpga"]
    vfs = [r["address"] for r in result["accelerators"] if r.get("physfn") == rec["address"]]
    if fp["vendor"] == "intel":
        return _locate_intel(sysfs, rec, fp, port, vfs, result)
    return _locate_xilinx(sysfs, rec, fp, port, result)


def _locate_intel(sysfs, rec, fp, port, vfs, result):
    ports = fp.get("ports") or []
    if not ports or not fp.get("layout"):
        raise FpgaError("%s: no FPGA port found in sysfs (driver %s); is the OPAE/DFL driver loaded?"
                        % (rec["address"], rec.get("driver")))
    chosen = None
    if port in (None, ""):
        if len(ports) > 1:
            raise FpgaError("%s has %d ports (%s); say which one with port" % (
                rec["address"], len(ports), ", ".join(p["id"] for p in ports)))
        chosen = ports[0]
    else:
        want = "%s" % port
        for p in ports:
            if want == p["id"] or want == p["id"].rsplit(".", 1)[-1]:
                chosen = p
        if chosen is None:
            raise FpgaError("%s has no port %r; its ports: %s" % (rec["address"], want, ", ".join(p["id"] for p in ports)))
    t = Target(rec["address"], "intel", "dynamic", fp["layout"], chosen["id"], "fpgaconf", rec)
    t.interface_ids = [r["interface_id"] for r in fp.get("regions") or [] if r.get("interface_id")]
    base = "/sys/bus/pci/devices/%s" % rec["address"]
    rel = _find_rel(sysfs, base, chosen["id"])
    t.function_path = "%s/%s/afu_id" % (base, rel) if rel else None
    if fp["layout"] == "opae":
        t.function_glob = "%s/fpga/intel-fpga-dev.*/intel-fpga-port.*/afu_id" % base
    else:
        t.function_glob = "%s/fpga_region/region*/dfl-port.*/afu_id" % base
    t.slots = [chosen["id"]]
    t.related = [rec["address"]] + vfs
    t.port_nodes = ["/dev/%s" % chosen["id"]]
    t.result = result
    return t


def _locate_xilinx(sysfs, rec, fp, port, result):
    if port not in (None, ""):
        raise FpgaError("%s is a single-program card (Xilinx Alveo): an xclbin fills the whole user partition, "
                        "so port must not be given" % rec["address"])
    mgmt, user = fp.get("management_address"), fp.get("user_address")
    if not mgmt:
        raise FpgaError("%s: the Alveo management PF (xclmgmt) was not found; xbmgmt programs through it" % rec["address"])
    if not user:
        raise FpgaError("%s: the Alveo user PF (xocl) was not found; the loaded xclbin cannot be read back" % rec["address"])
    t = Target(user, "xilinx", "single", fp.get("layout") or "xrt", None, "xbmgmt", rec)
    t.management = mgmt
    t.interface_ids = [r["interface_id"] for r in fp.get("regions") or [] if r.get("interface_id")]
    base = "/sys/bus/pci/devices/%s" % user
    if sysfs.exists(base + "/xclbinuuid"):
        t.function_path = base + "/xclbinuuid"
    else:
        for name in sysfs.listdir(base):
            if name.startswith("icap") and sysfs.exists("%s/%s/xclbinuuid" % (base, name)):
                t.function_path = "%s/%s/xclbinuuid" % (base, name)
                break
    t.function_glob = t.function_path
    t.slots = [u["id"] for u in rec.get("units") or []] or [user]
    t.related = [user, mgmt]
    t.result = result
    return t


def _find_rel(sysfs, base, name, depth=4):
    """The path below ``base`` of the directory ``name`` (breadth first, links not followed)."""
    level = [""]
    for _level in range(depth):
        nxt = []
        for rel in level:
            d = base + ("/" + rel if rel else "")
            for entry, is_dir, _is_link in sysfs.scandir(d):
                if not is_dir:
                    continue
                r = rel + "/" + entry if rel else entry
                if entry == name:
                    return r
                nxt.append(r)
        level = nxt
    return None


def read_function(sysfs, target):
    """The function loaded now (32 hex digits, None when nothing is loaded). Raises :class:`FpgaError` when
    it cannot be read (the device went away, the attribute is missing)."""
    if not target.function_path:
        raise FpgaError("%s: cannot find where the loaded function is shown in sysfs" % target.name)
    try:
        value = sysfs.read(target.function_path, limit=4096)
    except SysfsError as e:
        gone = "" if sysfs.exists("/sys/bus/pci/devices/%s" % target.address) else " (the device is gone from /sys/bus/pci/devices)"
        raise FpgaError("%s: cannot read the loaded function back: %s%s" % (target.name, e, gone))
    v = normalize_id(value)
    return None if _zero(v) else v


def in_use(sysfs, target):
    """Evidence (list of dicts) that something uses the target now: a running domain or a process holding
    the PF/VF (from discovery's in-use scan) or a process holding the Intel port's device node open."""
    evidence = []
    for rec in target.result["accelerators"]:
        for unit in rec.get("units") or []:
            if unit.get("in_use") and (unit.get("address") in target.related or unit.get("id") in target.related):
                for by in unit.get("in_use_by") or []:
                    item = dict(by)
                    item["unit"] = unit.get("id")
                    evidence.append(item)
    evidence.extend(_port_holders(sysfs, target.port_nodes))
    if target.management:
        evidence.extend(_domain_users(sysfs, target))
    return evidence


def _domain_users(sysfs, target):
    """Users of the Alveo management PF (discovery reports the card's units by its user PF)."""
    out = []
    for by in _inuse.collect(sysfs, _discovery.DEFAULT_LIBVIRT_RUN_DIR).lookup(address=target.management):
        item = dict(by)
        item["unit"] = target.management
        out.append(item)
    return out


def _port_holders(sysfs, nodes):
    if not nodes:
        return []
    out = []
    for pid in sysfs.listdir("/proc"):
        if not pid.isdigit():
            continue
        for fd in sysfs.listdir("/proc/%s/fd" % pid):
            link = sysfs.readlink("/proc/%s/fd/%s" % (pid, fd))
            if not link:
                continue
            host_link = sysfs.host(link) if link.startswith(sysfs.root + "/") and sysfs.root != "/" else link
            if host_link in nodes:
                comm = sysfs.read_optional("/proc/%s/comm" % pid)
                out.append({"kind": "process", "name": comm, "pid": int(pid), "unit": host_link,
                            "evidence": "/proc/%s/fd/%s -> %s" % (pid, fd, host_link)})
    return out


# -- tools -----------------------------------------------------------------------------------------
def tool_args(target, staged_path):
    """The vendor tool's arguments (after the tool's path) that load ``staged_path`` onto ``target``."""
    if target.tool == "fpgaconf":
        dom, bus, rest = target.address.split(":")
        dev, fn = rest.split(".")
        args = []
        if int(dom, 16):
            args += ["--segment", "0x%s" % dom]
        return args + ["-B", "0x%s" % bus, "-D", "0x%s" % dev, "-F", "0x%s" % fn, staged_path]
    return ["program", "--device", target.management, "--user", staged_path]


def load(runner, target, tool_path, bitstream, timeout):
    """Run the vendor tool once (a :class:`_tools.ToolRunner`); raises :class:`FpgaError` with the tool's own
    words when it fails."""
    try:
        return runner.run(tool_path, tool_args(target, bitstream["staged"]), timeout=timeout)[0]
    except ToolError as e:
        raise FpgaError("%s: %s%s" % (target.name, e, "; the region may be half-programmed" if e.timed_out else ""))


def verify(sysfs, target, want):
    got = read_function(sysfs, target)
    if got != want:
        raise FpgaError("%s: read back function %s after loading, not the requested %s"
                        % (target.name, dashed(got) if got else "none", dashed(want)))
    return got


# -- plan ----------------------------------------------------------------------------------------------
def build_plan(sysfs, runner, target, tool_path, bitstream, current, timeout, force=False, rollback=None,
               auditor=None, persist=None):
    """The plan for one run. ``current`` is the function read now (hex or None); ``rollback`` a staged
    bitstream whose function is ``current``; ``persist`` the :class:`BootUnit` changes (or None)."""
    plan = Plan()
    want = bitstream["function_id"]
    label = target.name
    if current != want or force:
        undo = None
        if rollback is not None:
            def undo():
                load(runner, target, tool_path, rollback, timeout)
                verify(sysfs, target, current)
                if auditor is not None:
                    auditor.record("rollback fpga function", label, old=dashed(want), new=dashed(current),
                                   extra={"bitstream": rollback["resolved"], "sha256": rollback["sha256"]})

        def action():
            load(runner, target, tool_path, bitstream, timeout)
            if auditor is not None:
                auditor.record("load fpga function", label, old=dashed(current) if current else None, new=dashed(want),
                               extra={"bitstream": bitstream["resolved"], "sha256": bitstream["sha256"],
                                      "tool": os.path.basename(tool_path)})

        plan.add("load %s (%s) onto %s with %s" % (os.path.basename(bitstream["resolved"]), dashed(want), label,
                                                   os.path.basename(tool_path or target.tool)),
                 action, undo, target=label, before=dashed(current) if current else None, after=dashed(want))
        # A read changes nothing: its undo is empty (None would report it as an irreversible change still in
        # effect after a later step failed and everything else was rolled back).
        plan.add("read the function back from %s" % (target.function_path,),
                 lambda: verify(sysfs, target, want), _nothing)
    if persist is not None:
        persist.add_steps(plan)
    return plan


def _nothing():
    return None


# -- the module's run (the plan hook of fpga_program, run by _hostmodule) ------------------------------------
def _function(value):
    return {"function": dashed(value) if value else None}


def check_fits(target, bitstream, label):
    """Refuse a bitstream of the wrong format or built for another interface than the region's."""
    fmt = "gbs" if target.vendor == "intel" else "xclbin"
    if bitstream["format"] != fmt:
        raise FpgaError("%s %s is a %s file; %s takes %s files" % (
            label, bitstream["path"], bitstream["format"], target.name, fmt))
    if not target.interface_ids:
        raise FpgaError("%s: the region's interface id cannot be read from sysfs, so %s cannot be checked "
                        "against it; nothing was loaded" % (target.name, label))
    if bitstream["interface_id"] not in target.interface_ids:
        raise FpgaError("%s %s was built for interface %s, but %s has interface %s; nothing was loaded" % (
            label, bitstream["path"], dashed(bitstream["interface_id"]), target.name,
            ", ".join(dashed(i) for i in target.interface_ids)))


def observe(sysfs, target):
    """The function shown now, for a failure message (never raises)."""
    try:
        v = read_function(sysfs, target)
        return dashed(v) if v else "none"
    except FpgaError as e:
        return "unknown (%s)" % e


def plan_program(host):
    """Everything checked, then the plan of one ``fpga_program`` run (a :class:`_hostmodule.Job`): the target,
    the verified bitstream(s), the in-use refusal, the load with its read-back and undo, the boot files. Keys
    are put into ``host.result`` as soon as they are known (a refusal returns them too)."""
    p, sysfs, out = host.params, host.sysfs, host.result
    if p["timeout"] is None or p["timeout"] < 1:
        raise FpgaError("timeout must be a positive number of seconds; got %r" % (p["timeout"],))
    target = locate(sysfs, p["address"], p["port"])
    out["target"] = target.describe()
    tool_path = find_tool(sysfs, target.tool)
    out["tool"] = {"path": tool_path, "runs": []}
    current = read_function(sysfs, target)
    out["before"] = _function(current)

    workdir = host.workdir()
    bitstream = stage_bitstream(p["bitstream"], p["sha256"], workdir)
    out["bitstream"] = _public(bitstream)
    check_fits(target, bitstream, "bitstream")
    want = bitstream["function_id"]
    if p["function_id"] and normalize_id(p["function_id"]) != want:
        raise FpgaError("bitstream %s carries function %s, not function_id %s; nothing was loaded"
                        % (p["bitstream"], dashed(want), p["function_id"]))
    rollback = None
    if p["rollback_bitstream"]:
        rollback = stage_bitstream(p["rollback_bitstream"], p["rollback_sha256"], workdir, label="rollback_bitstream")
        check_fits(target, rollback, "rollback_bitstream")
        if current != want and rollback["function_id"] != current:
            raise FpgaError("rollback_bitstream %s carries function %s, but %s has %s loaded now; it would not "
                            "restore the current state, so nothing was loaded"
                            % (p["rollback_bitstream"], dashed(rollback["function_id"]), target.name,
                               dashed(current) if current else "nothing"))

    loading = current != want or p["force"]
    if (loading or p["persistent"]) and tool_path is None:
        raise FpgaError("%s: %s" % (target.name, not_installed(sysfs, target.tool)))
    if loading:
        evidence = in_use(sysfs, target)
        if evidence:
            what = "card" if target.model == "single" else "port"
            raise FpgaError("%s is in use, refusing to load %s onto this %s (force does not change this): %s"
                            % (target.name, dashed(want), what, _inuse.evidence_text(evidence)), in_use_by=evidence)
    persist = BootUnit(host.files, sysfs, target, tool_path, bitstream, p["timeout"], present=p["persistent"],
                       wrap=host.auditor.wrap)
    if p["persistent"]:
        out["persistent"] = {"unit": persist.name, "files": dict(persist.host_paths)}
    runner = host.tools(p["timeout"], require_limit=True)
    runner.command([], p["timeout"])  # refuses now, before anything runs, when coreutils timeout is missing
    out["tool"]["runs"] = runner.calls
    plan = build_plan(sysfs, runner, target, tool_path, bitstream, current, p["timeout"], force=p["force"],
                      rollback=rollback, auditor=host.auditor, persist=persist)

    def finish(host):
        out["after"] = _function(want if host.check_mode else read_function(sysfs, target))

    def failed(_host, e):
        observed = observe(sysfs, target)
        out["observed_function"] = observed
        return "%s; %s now shows function %s" % (e, target.name, observed)
    return Job(plan, finish=finish, failed=failed)


# -- boot persistence ------------------------------------------------------------------------------------
def unit_name(target):
    """The boot unit of a target, in :mod:`_persist`'s one naming scheme."""
    return unit_basename("fpga", target.address, target.port) + ".service"


def legacy_unit_name(target):
    """The name releases before the shared boot units gave the unit (kept to find and retire it)."""
    name = "accelops-fpga-%s" % target.address.replace(":", "-").replace(".", "-")
    if target.port:
        name += "-" + re.sub(r"[^A-Za-z0-9]", "-", target.port)
    return name + ".service"


def _no_audit(fn, *_args, **_kwargs):
    return fn


class BootUnit(object):
    """What re-runs the same verified load at boot: a copy of the bitstream under :data:`STATE_DIR` and, through
    :class:`_persist.Files`, the loader script and its unit (the one unit writer of every host module). The
    script checks the copy's sha256, runs the tool with the timeout and reads the function back, retrying
    itself (so systemd does not restart it). A unit an older release wrote under its old name is retired."""

    def __init__(self, files, sysfs, target, tool_path, bitstream, timeout, present=True, wrap=None):
        self.files = files
        self.sysfs = sysfs
        self.target = target
        self.name = unit_name(target)
        self.present = present
        self.wrap = wrap or _no_audit
        ext = ".gbs" if bitstream["format"] == "gbs" else ".xclbin"
        self.host_paths = dict(files.unit_host_paths("fpga", target.address, target.port))
        self.host_paths["bitstream"] = "%s/%s%s" % (STATE_DIR, bitstream["sha256"], ext)
        self.paths = dict((k, files.real(v)) for k, v in self.host_paths.items())
        self.root = files.root
        self.bitstream = bitstream
        self.tool_path = tool_path
        self.timeout = timeout

    def body(self):
        t = self.target
        args = tool_args(t, self.paths["bitstream"])
        glob = self.sysfs.real(t.function_glob) if t.function_glob else ""
        return [
            "# reload %s at boot (a loaded function is lost at power-off): checks the pinned sha256 of the kept"
            % t.name,
            "# copy first, then the function read back from sysfs; retries %d times." % BOOT_RETRIES,
            "bitstream=%s" % shell_quote(self.paths["bitstream"]),
            "sha256=%s" % self.bitstream["sha256"],
            "want=%s" % self.bitstream["function_id"],
            "tries=0",
            "rc=1",
            "while [ \"$tries\" -lt %d ]; do" % BOOT_RETRIES,
            "    tries=$((tries + 1))",
            "    if ! echo \"$sha256  $bitstream\" | sha256sum -c --status -; then",
            "        echo \"accelops-fpga: $bitstream does not match sha256 $sha256; not loading\" >&2",
            "        exit 2",
            "    fi",
            "    if timeout --kill-after=10 %ds %s; then" % (self.timeout, " ".join(shell_quote(a) for a in [self.tool_path] + args)),
            "        for f in %s; do" % glob,
            "            got=$(tr -d -- '-\\n' < \"$f\" | tr 'A-F' 'a-f')",
            "            got=${got#0x}",
            "            if [ \"$got\" = \"$want\" ]; then",
            "                echo \"accelops-fpga: %s function $want loaded\"" % t.name,
            "                exit 0",
            "            fi",
            "        done",
            "        echo \"accelops-fpga: %s: function read back is not $want\" >&2" % t.name,
            "    fi",
            "    [ \"$tries\" -lt %d ] && sleep %d" % (BOOT_RETRIES, BOOT_RETRY_DELAY),
            "done"]

    def add_steps(self, plan):
        """Add the steps that make the boot files what they must be (nothing when they already are)."""
        if self.present and not _same_file(self.paths["bitstream"], self.bitstream["sha256"]):
            plan.add("keep a copy of the bitstream at %s for boot" % self.host_paths["bitstream"],
                     self.wrap(self._copy_bitstream, "keep bitstream copy", self.host_paths["bitstream"], None,
                               self.bitstream["sha256"]),
                     self._forget_bitstream, target=self.host_paths["bitstream"], before=None,
                     after=self.bitstream["sha256"])
        old = legacy_unit_name(self.target)
        legacy = [("%s/%s" % (UNIT_DIR, old), "%s/%s.sh" % (STATE_DIR, old[:-len(".service")]))]
        self.files.unit_steps(
            plan, self.wrap, "fpga_program", "fpga", self.target.address,
            "Load FPGA function %s onto %s (accelops.lifecycle)" % (dashed(self.bitstream["function_id"]), self.target.name),
            self.body() if self.present else None, part=self.target.port, after=("local-fs.target",), restart=False,
            timeout_start=BOOT_RETRIES * (self.timeout + 10 + BOOT_RETRY_DELAY) + 30, legacy=legacy)

    def _copy_bitstream(self):
        p = self.paths["bitstream"]
        make_dirs(os.path.dirname(p), 0o700)
        tmp = p + ".tmp"
        try:
            shutil.copyfile(self.bitstream["staged"], tmp)
            os.chmod(tmp, 0o400)
            os.rename(tmp, p)
        finally:
            _discard(tmp)

    def _forget_bitstream(self):
        """Undo of the copy: remove it, unless the loader script on disk still names it (its own undo failed), so
        that the boot unit never points at a missing file."""
        script = self.files.read(self.paths["script"]) or ""
        if self.paths["bitstream"] in script:
            return
        if os.path.lexists(self.paths["bitstream"]):
            os.unlink(self.paths["bitstream"])


def _discard(path):
    """Remove a temporary file a failed write left behind (nothing after a rename)."""
    try:
        if os.path.lexists(path):
            os.unlink(path)
    except OSError:
        pass


def _same_file(path, sha256):
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest() == sha256
    except (IOError, OSError):
        return False


PROGRAM = Program(
    "fpga_program",
    dict(
        address=dict(type="str", required=True),
        bitstream=dict(type="path", required=True),
        sha256=dict(type="str", required=True),
        function_id=dict(type="str"),
        port=dict(type="str", aliases=["region"]),
        rollback_bitstream=dict(type="path"),
        rollback_sha256=dict(type="str"),
        timeout=dict(type="int", default=300),
        force=dict(type="bool", default=False),
        persistent=dict(type="bool", default=False),
        persist_root=dict(type="path"),
    ),
    plan_program,
    ranges={"timeout": (1, 86400, "seconds")},
    required_together=[("rollback_bitstream", "rollback_sha256")],
)
