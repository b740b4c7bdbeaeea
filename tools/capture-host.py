#!/usr/bin/env python
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read-only capture of everything the collection's discovery and programming plans read on a host.

Usage: capture-host.py OUTDIR [--keep-ids] [--root /]   (writes OUTDIR/capture.json)

It never writes to sysfs, never changes a device or GPU setting, and runs only read-only vendor tool
listings. The capture is a folder:

- ``capture.json``, one file (paths hold colons, which no file name in a collection may): format version, every
  command with its argv, exit status, stdout and stderr apart; every small regular file read (sysfs attributes,
  /proc/driver, module parameters) with its text; every symbolic link met under the captured paths and its
  target; every folder met (``dirs``: an empty one matters to discovery); where each tool the collection uses is
  (``tools``); what could not be read and why; the /dev entries listed (never read).

GPU UUIDs, serial numbers, MAC addresses and the host name are replaced by stable placeholders unless
``--keep-ids`` is given, so a capture can be shared in a pull request.

Besides the fixed listings it runs the per-GPU forms the programming plans run (``nvidia-smi mig -lgi -i N`` and
the like, for each GPU index ``nvidia-smi`` lists), ``ip -d -j link show dev NETDEV`` for each SR-IOV PF's network
interface, and, with ``--root`` (a simulated host), the tools found under that root rather than on PATH. ``tests/simulator/accelsim/replay.py`` turns
a capture into a simulator lab that answers from it (docs/simulator.md, "Contribute a capture").
"""

import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import time

FORMAT = 1
MAX_FILE = 64 * 1024
READ_TIMEOUT = 2.0
TOOL_TIMEOUT = 60

# Attributes whose read has a cost or a side effect on some devices, or that hold no text.
SKIP_ATTRS = {"config", "rom", "remove", "rescan", "reset", "bind", "unbind", "new_id", "remove_id", "vpd",
              "driver_override_once", "d3cold_allowed_once"}
SKIP_PREFIX = ("resource",)
# Subfolders of a PCI function whose contents discovery reads, walked to this depth (links not followed).
DEVICE_SUBDIRS = {"mdev_supported_types": 3, "nvidia": 2, "drm": 5, "sriov_admin": 4, "fpga_region": 6,
                  "fpga_bridge": 2, "fpga_manager": 2, "dfl-fme-region": 3, "net": 2, "qat": 2, "msi_irqs": 0,
                  "iov": 4, "gt": 3, "fpga": 4, "xlnx": 3, "xocl": 3, "xmgmt": 3, "icap": 2}
MODULES = ("nvidia", "nvidia_vgpu_vfio", "gim", "amdgpu", "i915", "xe", "vfio_pci", "vfio", "qat_4xxx",
           "qat_c62x", "qat_dh895xcc", "intel_qat", "dfl_pci", "xocl", "xclmgmt", "mlx5_core", "ice", "i40e")

TOOLS = [
    ("smi-version", ["nvidia-smi", "--version"]),
    ("smi-L", ["nvidia-smi", "-L"]),
    ("smi-q", ["nvidia-smi", "-q"]),
    # exactly the query discovery runs
    ("smi-query-mig", ["nvidia-smi", "--query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending",
                       "--format=csv,noheader"]),
    ("smi-query-ids", ["nvidia-smi", "--query-gpu=index,pci.bus_id,pci.device_id,pci.sub_device_id,name,uuid,"
                       "serial,memory.total,driver_version,vbios_version", "--format=csv"]),
    ("smi-mig-lgi", ["nvidia-smi", "mig", "-lgi"]),
    ("smi-mig-lci", ["nvidia-smi", "mig", "-lci"]),
    ("smi-mig-lgip", ["nvidia-smi", "mig", "-lgip"]),
    ("smi-mig-lgipp", ["nvidia-smi", "mig", "-lgipp"]),
    ("smi-mig-lcip", ["nvidia-smi", "mig", "-lcip"]),
    ("smi-vgpu", ["nvidia-smi", "vgpu"]),
    ("smi-vgpu-q", ["nvidia-smi", "vgpu", "-q"]),
    ("smi-vgpu-s", ["nvidia-smi", "vgpu", "-s"]),
    ("smi-vgpu-s-v", ["nvidia-smi", "vgpu", "-s", "-v"]),
    ("smi-vgpu-c", ["nvidia-smi", "vgpu", "-c"]),
    ("smi-vgpu-c-v", ["nvidia-smi", "vgpu", "-c", "-v"]),
    ("smi-topo", ["nvidia-smi", "topo", "-m"]),
    ("lspci-Dnnk", ["lspci", "-D", "-nn", "-k"]),
    ("lspci-vmm", ["lspci", "-D", "-vmm", "-nn", "-k"]),
    ("mdevctl-list", ["mdevctl", "list", "--dumpjson"]),
    ("mdevctl-types", ["mdevctl", "types", "--dumpjson"]),
    ("amd-smi-list", ["amd-smi", "list", "--json"]),
    ("amd-smi-partition", ["amd-smi", "partition", "--json"]),
    ("xpu-smi-discovery", ["xpu-smi", "discovery", "-j"]),
    ("fpgainfo-fme", ["fpgainfo", "fme"]),
    ("xbmgmt-examine", ["xbmgmt", "examine"]),
    ("uname", ["uname", "-srvm"]),
    ("mdevctl-list-d", ["mdevctl", "list", "-d", "--dumpjson"]),
    # the query nvidia_mig's plan runs
    ("smi-query-mig-ids", ["nvidia-smi", "--query-gpu=index,pci.bus_id,pci.device_id,pci.sub_device_id,"
                           "mig.mode.current,mig.mode.pending", "--format=csv,noheader"]),
]
# Tools the collection runs or looks for (the plans check that a tool is installed before they run it): where
# each is, recorded without running it.
TOOLS_LOOKED_UP = ("nvidia-smi", "mdevctl", "sriov-manage", "ip", "fpgaconf", "fpgainfo", "xbmgmt", "xbutil",
                   "amd-smi", "xpu-smi", "lspci", "systemctl", "virsh")
# Run for each GPU index nvidia-smi lists: what the MIG and vGPU plans read of one GPU.
PER_GPU = [
    ("smi-mig-lgi-i%s", ["nvidia-smi", "mig", "-lgi", "-i"]),
    ("smi-mig-lci-i%s", ["nvidia-smi", "mig", "-lci", "-i"]),
    ("smi-mig-lgip-i%s", ["nvidia-smi", "mig", "-lgip", "-i"]),
    ("smi-mig-lgipp-i%s", ["nvidia-smi", "mig", "-lgipp", "-i"]),
    ("smi-vgpu-q-i%s", ["nvidia-smi", "vgpu", "-q", "-i"]),
    ("smi-vgpu-s-v-i%s", ["nvidia-smi", "vgpu", "-s", "-v", "-i"]),
]
# device nodes whose holders are in-use evidence (VFIO groups and cdevs, GPU, DRM, FPGA and accelerator nodes)
DEVICE_NODE = re.compile(r"^/dev/(vfio/|nvidia|dri/|dfl-|intel-fpga|xclmgmt|xfpga|accel/|kfd$|qat)")
# files whose whole text identifies a device or the host: replaced by a placeholder (Capture.private)
PRIVATE_FILES = ("serial_number", "hostname")
# where tools are looked for under --root (the collection's own list, plugins/module_utils/_tools.py)
ROOT_TOOL_DIRS = ("/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/lib/nvidia")


class Capture(object):
    def __init__(self, out, root="/", keep_ids=False):
        self.out = out
        self.root = root
        self.keep_ids = keep_ids
        self.links = {}
        self.files = {}
        self.skipped = {}
        self.commands = []
        self.subst = {}
        self.dirs = set()

    # -- anonymising -------------------------------------------------------------------------------------------
    _patterns = [
        ("uuid", re.compile(r"(?:GPU|MIG)-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")),
        ("serial", re.compile(r"(?<=Serial Number)(\s*:\s*)(\d{6,})")),
        ("serial_csv", re.compile(r"(?m)^(\d+, [0-9A-Fa-f:.]+, [^\n]*?, )(\d{10,})(?=,)")),
        ("mac", re.compile(r"\b(?:[0-9a-f]{2}:){5}[0-9a-f]{2}\b")),
        ("pdi", re.compile(r"(?<=GPU PDI)(\s*:\s*)(0x[0-9a-fA-F]+)")),
    ]

    def _placeholder(self, kind, value):
        key = (kind, value)
        if key not in self.subst:
            n = sum(1 for k in self.subst if k[0] == kind) + 1
            if kind == "uuid":
                prefix = value.split("-", 1)[0]
                self.subst[key] = "%s-00000000-0000-4000-8000-%012d" % (prefix, n)
            elif kind == "mac":
                self.subst[key] = "02:00:00:00:%02x:%02x" % (n // 256, n % 256)
            elif kind == "pdi":
                self.subst[key] = "0x%016x" % n
            else:
                self.subst[key] = "%013d" % (1000000000000 + n)
        return self.subst[key]

    def private(self, name, text):
        """The placeholder of a PRIVATE_FILES file: the host name ``capture-host``; a PCIe device serial number
        (eight dash-separated bytes) another of the same form, stable within the capture."""
        if name == "hostname":
            return "capture-host"
        key = ("dsn", text)
        if key not in self.subst:
            n = sum(1 for k in self.subst if k[0] == "dsn") + 1
            self.subst[key] = "-".join("%02x" % b for b in n.to_bytes(8, "big"))
        return self.subst[key]

    def scrub(self, text):
        if self.keep_ids:
            return text
        for kind, pat in self._patterns:
            if kind == "uuid" or kind == "mac":
                text = pat.sub(lambda m, k=kind: self._placeholder(k, m.group(0)), text)
            else:
                text = pat.sub(lambda m, k=kind: m.group(1) + self._placeholder(
                    "serial" if k == "serial_csv" else k, m.group(2)), text)
        host = socket.gethostname()
        if host and len(host) > 2:
            text = text.replace(host, "capture-host")
        return text

    # -- files -------------------------------------------------------------------------------------------------
    def _local(self, path):
        return os.path.join(self.root, path.lstrip("/")) if self.root != "/" else path

    def read_file(self, path):
        """Copy one small regular file; never follows a link to it, never blocks on a FIFO."""
        local = self._local(path)
        try:
            st = os.lstat(local)
        except OSError:
            return
        if stat.S_ISLNK(st.st_mode):
            self.links[path] = os.readlink(local)
            return
        if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o444:
            return
        name = os.path.basename(path)
        if name in SKIP_ATTRS or name.startswith(SKIP_PREFIX):
            return
        start = time.monotonic()
        try:
            fd = os.open(local, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        except OSError as e:
            self.skipped[path] = e.strerror or str(e)
            return
        try:
            data = os.read(fd, MAX_FILE)
        except OSError as e:
            # write-only attributes and ones the driver refuses to show: record why
            self.skipped[path] = e.strerror or str(e)
            return
        finally:
            os.close(fd)
        if time.monotonic() - start > READ_TIMEOUT:
            self.skipped[path] = "slow read"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.skipped[path] = "binary"
            return
        if not self.keep_ids and name in PRIVATE_FILES:
            text = self.private(name, text.strip()) + "\n"
        self.files[path] = self.scrub(text)

    def walk(self, path, depth):
        """Files of one folder and, to ``depth`` levels, its subfolders; links recorded, not followed."""
        local = self._local(path)
        try:
            names = sorted(os.listdir(local))
        except OSError:
            return
        self.dirs.add(path)
        for name in names:
            p = path.rstrip("/") + "/" + name
            try:
                st = os.lstat(self._local(p))
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                self.links[p] = os.readlink(self._local(p))
            elif stat.S_ISDIR(st.st_mode):
                self.dirs.add(p)
                if depth > 0:
                    self.walk(p, depth - 1)
            else:
                self.read_file(p)

    def pci_function(self, bdf):
        bus_link = "/sys/bus/pci/devices/" + bdf
        try:
            self.links[bus_link] = os.readlink(self._local(bus_link))
        except OSError:
            return
        real = os.path.normpath(os.path.join("/sys/bus/pci/devices", self.links[bus_link]))
        local = self._local(real)
        self.dirs.add(real)
        for name in sorted(os.listdir(local)):
            p = real + "/" + name
            st = os.lstat(self._local(p))
            if stat.S_ISLNK(st.st_mode):
                self.links[p] = os.readlink(self._local(p))
            elif stat.S_ISDIR(st.st_mode):
                self.dirs.add(p)
                if name in DEVICE_SUBDIRS:
                    self.walk(p, DEVICE_SUBDIRS[name])
                elif re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-", name):
                    self.walk(p, 1)  # an mdev child
            else:
                self.read_file(p)

    def sysfs(self):
        for bdf in sorted(os.listdir(self._local("/sys/bus/pci/devices"))):
            self.pci_function(bdf)
        for group in sorted(os.listdir(self._local("/sys/kernel/iommu_groups")) if os.path.isdir(
                self._local("/sys/kernel/iommu_groups")) else []):
            self.walk("/sys/kernel/iommu_groups/%s/devices" % group, 0)
        for cls in ("mdev_bus", "fpga_region", "fpga_manager", "fpga_bridge", "drm", "net"):
            self.walk("/sys/class/" + cls, 0)
        for folder in ("/sys/bus/mdev/devices", "/sys/bus/pci/drivers"):
            self.walk(folder, 0)
        for mod in MODULES:
            self.walk("/sys/module/%s/parameters" % mod, 0)
            self.read_file("/sys/module/%s/version" % mod)
        self.walk("/proc/driver/nvidia/gpus", 2)
        self.read_file("/proc/driver/nvidia/version")
        self.walk("/proc/driver/nvidia-caps", 0)
        self.read_file("/proc/cmdline")
        for name in ("osrelease", "hostname"):
            self.read_file("/proc/sys/kernel/" + name)
        self.walk("/sys/class/mdev_bus", 0)
        for folder in ("/dev/nvidia-caps", "/dev/vfio", "/dev/dri", "/run/libvirt/qemu"):
            self.listing(folder)
        # running guests (in-use evidence): libvirt's live domain XML and pid files
        self.walk("/run/libvirt/qemu", 0)
        self.processes()
        for dev in sorted(os.listdir(self._local("/dev"))):
            if re.match(r"^nvidia(\d+|ctl|-uvm|-vgpu\d*)$", dev):
                self.listing("/dev/" + dev, single=True)

    def processes(self):
        """The processes holding a device node open (in-use evidence): each ``/proc/<pid>/fd/<n>`` link into /dev
        and the process's ``comm``; nothing else of a process is read."""
        proc = self._local("/proc")
        for pid in sorted((p for p in os.listdir(proc) if p.isdigit()), key=int) if os.path.isdir(proc) else []:
            fd_dir = "/proc/%s/fd" % pid
            try:
                fds = os.listdir(self._local(fd_dir))
            except OSError:
                continue
            held = False
            for fd in sorted(fds, key=lambda n: int(n) if n.isdigit() else -1):
                try:
                    target = os.readlink(self._local(fd_dir + "/" + fd))
                except OSError:
                    continue
                if target.startswith("/dev/") and DEVICE_NODE.match(target):
                    self.links[fd_dir + "/" + fd] = target
                    held = True
            if held:
                self.dirs.add(fd_dir)
                self.read_file("/proc/%s/comm" % pid)

    def listing(self, path, single=False):
        """Names, types and device numbers under a /dev or /run folder (contents never read)."""
        entries = {}
        names = [os.path.basename(path)] if single else None
        base = os.path.dirname(path) if single else path
        try:
            names = names or sorted(os.listdir(self._local(base)))
        except OSError:
            return
        for name in names:
            try:
                st = os.lstat(self._local(base + "/" + name))
            except OSError:
                continue
            kind = ("chr" if stat.S_ISCHR(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode)
                    else "link" if stat.S_ISLNK(st.st_mode) else "file")
            entry = {"type": kind, "mode": "%o" % stat.S_IMODE(st.st_mode)}
            if kind == "chr":
                entry["major"], entry["minor"] = os.major(st.st_rdev), os.minor(st.st_rdev)
            entries[name] = entry
        self.dev_listings = getattr(self, "dev_listings", {})
        self.dev_listings.setdefault(base, {}).update(entries)

    # -- tools -------------------------------------------------------------------------------------------------
    def which(self, tool):
        """The tool's path: on PATH or in the collection's tool folders; under --root only in those (a simulated
        host's)."""
        if self.root == "/" and shutil.which(tool):
            return shutil.which(tool)
        # under --root only there; on the host also there, as the collection looks (sriov-manage is in no PATH folder)
        for folder in ROOT_TOOL_DIRS:
            path = self._local(folder + "/" + tool)
            if os.access(path, os.X_OK) and not os.path.isdir(path):
                return path
        return None

    def gpu_indexes(self):
        """The GPU indexes in the captured ``nvidia-smi --query-gpu`` output (its first column)."""
        entry = [c for c in self.commands if c["name"] == "smi-query-mig"]
        if not entry or entry[0].get("rc") != 0:
            return []
        lines = entry[0]["stdout"].splitlines()
        return sorted({line.split(",")[0].strip() for line in lines if line.split(",")[0].strip().isdigit()}, key=int)

    def sriov_netdevs(self):
        """The network interfaces of SR-IOV PFs (what sriov_vfs asks ``ip`` about)."""
        out = []
        devices = self._local("/sys/bus/pci/devices")
        for bdf in sorted(os.listdir(devices)) if os.path.isdir(devices) else []:
            if os.path.exists(os.path.join(devices, bdf, "sriov_totalvfs")):
                try:
                    out.extend(sorted(os.listdir(os.path.join(devices, bdf, "net"))))
                except OSError:
                    pass
        return out

    def tools(self):
        self.tool_paths = dict((t, self.which(t)) for t in TOOLS_LOOKED_UP)
        for name, argv in TOOLS:
            self.run(name, argv)
        for index in self.gpu_indexes():
            for name, argv in PER_GPU:
                self.run(name % index, argv + [index])
        for netdev in self.sriov_netdevs():
            self.run("ip-link-%s" % re.sub(r"[^A-Za-z0-9_.-]", "_", netdev), ["ip", "-d", "-j", "link", "show", "dev", netdev])

    def run(self, name, argv):
        """Run one read-only listing; its streams and exit status recorded."""
        exe = self.which(argv[0])
        entry = {"name": name, "argv": argv, "found": bool(exe)}
        if exe:
            start = time.monotonic()
            try:
                p = subprocess.run([exe] + argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=TOOL_TIMEOUT, check=False)
                entry["rc"] = p.returncode
                out, err = p.stdout, p.stderr
            except subprocess.TimeoutExpired as e:
                entry["rc"] = None
                entry["timed_out"] = True
                out, err = e.stdout or b"", e.stderr or b""
            entry["seconds"] = round(time.monotonic() - start, 3)
            for stream, data in (("stdout", out), ("stderr", err)):
                entry[stream] = self.scrub(data.decode("utf-8", "replace"))
        self.commands.append(entry)

    def write(self):
        doc = {
            "format": FORMAT,
            "captured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "anonymised": not self.keep_ids,
            "commands": self.commands,
            "links": dict(sorted(self.links.items())),
            "files": dict(sorted(self.files.items())),
            "unreadable": dict(sorted(self.skipped.items())),
            "dev": getattr(self, "dev_listings", {}),
            "dirs": sorted(self.dirs),
            "tools": getattr(self, "tool_paths", {}),
        }
        with open(os.path.join(self.out, "capture.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    keep_ids = "--keep-ids" in argv
    root = "/"
    if "--root" in argv:
        root = argv[argv.index("--root") + 1]
        args.remove(root)
    if len(args) != 1:
        sys.stderr.write("usage: capture-host.py OUTDIR [--keep-ids] [--root DIR]\n")
        return 2
    out = args[0]
    if os.path.exists(out) and os.listdir(out):
        sys.stderr.write("capture-host.py: %s is not empty\n" % out)
        return 2
    os.makedirs(out, exist_ok=True)
    cap = Capture(out, root=root, keep_ids=keep_ids)
    cap.tools()
    cap.sysfs()
    cap.write()
    print("captured %d files, %d links, %d commands (%d found) into %s"
          % (len(cap.files), len(cap.links), len(cap.commands), sum(1 for c in cap.commands if c["found"]), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
