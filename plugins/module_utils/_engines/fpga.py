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
   metadata JSON; Xilinx xclbin ``axlf`` header).
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
import os
import re
import stat
import tempfile

from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery, _inuse
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import family_drivers, for_record
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers.fpga import (  # noqa: F401 pylint: disable=unused-import
    HEX_ID_RE, FpgaError, Target, is_zero_id, normalize_id)
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import LIBVIRT_RUN_DIR_OPTION
from ansible_collections.accelops.lifecycle.plugins.module_utils._hostmodule import Job, Program
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import pci_address
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import UNIT_DIR, shell_quote, unit_basename
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Plan, Refusal  # noqa: F401 pylint: disable=unused-import
from ansible_collections.accelops.lifecycle.plugins.module_utils._safefile import (
    check_dir, copy_atomic, make_dir, open_regular)
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError
from ansible_collections.accelops.lifecycle.plugins.module_utils._tools import ToolError, find_tool, not_installed

__metaclass__ = type

HEADER_LIMIT = 1 << 20                   # metadata is read from the first MiB at most
SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
STATE_DIR = "/var/lib/accelops/fpga"
BOOT_RETRIES = 3
BOOT_RETRY_DELAY = 10


# -- ids -------------------------------------------------------------------------------------------
def dashed(hexid):
    """32 hex digits as 8-4-4-4-12 (how the tools print UUIDs); other text unchanged."""
    h = normalize_id(hexid)
    if h and HEX_ID_RE.match(h):
        return "%s-%s-%s-%s-%s" % (h[:8], h[8:12], h[12:16], h[16:20], h[20:])
    return hexid


# -- bitstreams --------------------------------------------------------------------------------------
def parse_bitstream(data):
    """What a bitstream's header says: ``{format, interface_id, function_id, name, platform}`` with ids as
    32 hex digits. ``data`` is the file's first bytes (the header; a MiB is plenty). The FPGA family whose magic
    the file starts with parses it. Raises :class:`FpgaError` when no family knows the format or the metadata is
    broken."""
    families = [d for d in family_drivers("fpga") if d.bitstream_magic]
    for drv in families:
        if data[:len(drv.bitstream_magic)] == drv.bitstream_magic:
            return drv.parse_bitstream(data)
    raise FpgaError("not a bitstream this module knows: neither %s" % " nor ".join(d.bitstream_kind for d in families))


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
                if not size and not _bitstream_head(chunk):
                    # The file rule for bitstreams: only a file that starts as a bitstream of a family the
                    # collection loads is read through and hashed; of any other file nothing is reported.
                    raise FpgaError("%s %s%s is not a bitstream this module loads (%s); it was not read further and "
                                    "nothing of it is reported" % (label, path, _via(info), _kinds()))
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


def _bitstream_head(data):
    return any(data[:len(d.bitstream_magic)] == d.bitstream_magic for d in family_drivers("fpga") if d.bitstream_magic)


def _kinds():
    return " nor ".join(d.bitstream_kind for d in family_drivers("fpga") if d.bitstream_magic)


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


def discover_card(sysfs, address, libvirt_run_dir=_discovery.DEFAULT_LIBVIRT_RUN_DIR):
    """The discovery record of the FPGA card at ``address`` (either PF of an Alveo card), its users read from the
    domains in ``libvirt_run_dir`` (the module's option)."""
    addr = pci_address(address)
    if addr is None:
        raise FpgaError("address must be a PCI address such as 0000:5e:00.0 or 5e:00.0; got %r" % (address,))
    if not sysfs.exists("/sys/bus/pci/devices/%s" % addr):
        raise FpgaError("%s: no such PCI device on this host (nothing in /sys/bus/pci/devices)" % addr)
    # no vendor tool runs: only FPGA drivers describe
    result = _discovery.discover(sysfs, families=["fpga"], addresses=[addr], libvirt_run_dir=libvirt_run_dir)
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


def locate(sysfs, address, port=None, libvirt_run_dir=_discovery.DEFAULT_LIBVIRT_RUN_DIR):
    """Describe the programmable target at ``address`` (and ``port`` where the card has several), as the card's
    family sees it (its driver's ``program_target``)."""
    rec, result = discover_card(sysfs, address, libvirt_run_dir)
    vfs = [r["address"] for r in result["accelerators"] if r.get("physfn") == rec["address"]]
    return for_record(rec).program_target(sysfs, rec, port, vfs, result)


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
    return None if is_zero_id(v) else v


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
    """Users of the Alveo management PF (discovery reports the card's units by its user PF), from the domains in the
    run dir the card's discovery read (the module's libvirt_run_dir)."""
    out = []
    run_dir = ((getattr(target, "result", None) or {}).get("host") or {}).get("libvirt_run_dir")
    for by in _inuse.collect(sysfs, run_dir).lookup(address=target.management):
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
    return target.driver.tool_args(target, staged_path)


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
    fmt = target.driver.bitstream_format
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
    target = locate(sysfs, p["address"], p["port"], p["libvirt_run_dir"])
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

    def after(self):
        """The units the load starts after: the file systems, and for a port given to a VF the PF's SR-IOV unit, which
        makes the VF that the function is read back on."""
        if self.target.port_on_vf:
            return ("local-fs.target", unit_basename("sriov", self.target.address) + ".service")
        return ("local-fs.target",)

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
            self.body() if self.present else None, part=self.target.port, after=self.after(), restart=False,
            timeout_start=BOOT_RETRIES * (self.timeout + 10 + BOOT_RETRY_DELAY) + 30, legacy=legacy)

    def _copy_bitstream(self):
        p = self.paths["bitstream"]
        # The kept copy's directory is the run's own (0700, owner and mode checked); the copy is made under a
        # fresh O_EXCL name and renamed into place (_safefile): a planted link is replaced, never written through.
        make_dir(os.path.dirname(p), 0o700)
        copy_atomic(self.bitstream["staged"], p, 0o400)

    def _forget_bitstream(self):
        """Undo of the copy: remove it, unless the loader script on disk still names it (its own undo failed), so
        that the boot unit never points at a missing file."""
        script = self.files.read(self.paths["script"]) or ""
        if self.paths["bitstream"] in script:
            return
        if os.path.lexists(self.paths["bitstream"]):
            os.unlink(self.paths["bitstream"])


def _same_file(path, sha256):
    """Whether the kept copy at ``path`` is a regular file in a checked directory with this sha256: a link, a
    FIFO or a directory open to others is not the copy (the plan replaces it), and is never waited on."""
    try:
        check_dir(os.path.dirname(path))
        fd = open_regular(path, owned=True)
    except (IOError, OSError):
        return False
    try:
        h = hashlib.sha256()
        for chunk in iter(lambda: os.read(fd, 1 << 20), b""):
            h.update(chunk)
        return h.hexdigest() == sha256
    except (IOError, OSError):
        return False
    finally:
        os.close(fd)


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
        libvirt_run_dir=LIBVIRT_RUN_DIR_OPTION,
    ),
    plan_program,
    ranges={"timeout": (1, 86400, "seconds")},
    paths=("libvirt_run_dir",),
    required_together=[("rollback_bitstream", "rollback_sha256")],
)
