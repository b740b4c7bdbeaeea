"""What systemd does at boot, for a simulated host mounted with FUSE: run the services enabled under the host's
``etc/systemd/system/*.target.wants/`` (their ``ExecStart``), retrying those with ``Restart=on-failure``.

The host's ``etc/`` is its disk (kept across reboots), so units that a module generated through the mount
come back with the host, as on a real one. Only FUSE mounts run units: writes into a plain tree have no
kernel behind them. mdevctl definitions with ``start: auto`` are started by the kernel model itself
(``Host.reboot``), as mdevctl's udev rule does.
"""

import glob
import json
import os
import subprocess
import time

BOOT_LOG = "boot.log"


def _unit_settings(path):
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if "=" in line and not line.startswith(("#", ";", "[")):
                    key, value = line.split("=", 1)
                    out.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    return out


def enabled_units(root):
    """The enabled units' files under ``root``: [(name, path)] sorted by name."""
    found = {}
    for link in glob.glob(os.path.join(root, "etc/systemd/system/*.target.wants/*.service")):
        name = os.path.basename(link)
        target = os.path.join(root, "etc/systemd/system", name)
        if os.path.islink(link):
            dest = os.readlink(link)
            # a link written for the host (/etc/...) or for the lab (<root>/etc/...)
            cand = dest if dest.startswith(root) else os.path.join(root, dest.lstrip("/"))
            if os.path.exists(cand):
                target = cand
        if os.path.exists(target):
            found[name] = target
    return sorted(found.items())


def boot_order(units):
    """``units`` ([(name, path)] in name order) in the order systemd starts them one at a time: a unit named in
    another's ``After=`` first, one named in its ``Before=`` after it (systemd.unit(5), "Before=, After="); name
    order otherwise, and where the orderings form a cycle (systemd breaks one; here the rest go in name order)."""
    names = [n for n, _p in units]
    first = dict((n, set()) for n in names)  # the units that must start before n
    for n, path in units:
        cfg = _unit_settings(path)
        for other in cfg.get("After", "").split():
            if other in first and other != n:
                first[n].add(other)
        for other in cfg.get("Before", "").split():
            if other in first and other != n:
                first[other].add(n)
    out = []
    while len(out) < len(names):
        left = [n for n in names if n not in out]
        ready = [n for n in left if first[n] <= set(out)] or left
        out.append(ready[0])
    paths = dict(units)
    return [(n, paths[n]) for n in out]


def run_units(root, state_dir=None, retries=5, delay=0.2, timeout=120):
    """Run the enabled units' ExecStart commands (``/bin/sh -c``) in their boot order (:func:`boot_order`); a unit
    that fails and says ``Restart=on-failure`` is run again, up to ``retries`` times. Returns [{"unit", "rc",
    "tries", "output"}] and appends it to ``<state_dir>/boot.log``."""
    results = []
    for name, path in boot_order(enabled_units(root)):
        cfg = _unit_settings(path)
        cmd = cfg.get("ExecStart")
        if not cmd:
            continue
        cmd = cmd.lstrip("-@+!:")
        tries = 0
        while True:
            tries += 1
            try:
                p = subprocess.run(["/bin/sh", "-c", cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=timeout, check=False)
                rc, output = p.returncode, p.stdout.decode("utf-8", "replace")
            except subprocess.TimeoutExpired:
                rc, output = 124, "timed out after %d s" % timeout
            if rc == 0 or cfg.get("Restart") not in ("on-failure", "always") or tries > retries:
                break
            time.sleep(delay)
        results.append({"unit": name, "rc": rc, "tries": tries, "output": output})
    if state_dir:
        with open(os.path.join(state_dir, BOOT_LOG), "a", encoding="utf-8") as f:
            f.write(json.dumps(results) + "\n")
    return results
