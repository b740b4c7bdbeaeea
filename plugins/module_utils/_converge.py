# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The converge of one host, as the ``accelerator_converge`` module runs it.

allow-list -> host lock (converge mode) -> discovery -> resolution of the declaration -> one record per assigned
card with its status (``ok``: carries its function; ``todo``; ``blocked``: in use, safe mode; ``unsupported``:
nothing programs it) -> the plan of every card to change, through the programming module's own plan hook
(:class:`_hostmodule.Program`) -> check mode stops here -> when any plan failed, nothing is changed -> each card's
plan runs (a failing step rolls that card back) -> discovery again, and each changed card is verified against the
declaration -> the lock is released.

The in-use rule is :func:`_cardstate.card_in_use` (through the resolution), plus the evidence the controller passes
in from Placement (``placement_in_use``); the status is :func:`_cardstate.converge_status`, which the batch also
calls when it adds Placement's evidence after the plan (:func:`_cardstate.with_placement`).

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time

from ansible_collections.accelops.lifecycle.plugins.module_utils._cardstate import converge_status
from ansible_collections.accelops.lifecycle.plugins.module_utils._declaration import (
    DeclarationError,
    allow_list_refusal,
    check_reporting,
    kind_of,
    reporters,
    resolve,
    validate,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._discovery import OptionError, discover
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._safefile import (
    describe,
    discard,
    make_dir,
    open_regular,
    read_text,
    write_atomic,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import plan_failure

LOCK_FILE = "converge.lock"
OWNER_FILE = "converge.owner"
LOCK_POLL = 0.05
# The owner record is four short lines; a longer file is not one this module wrote.
OWNER_LIMIT = 4096
OWNER_KEYS = ("pid", "token", "owner", "started")
# The run record: what the last apply under the lock set out to do and what it did, written before the first change
# and after each card, marked done at the end. A record not marked done is a run cut during its apply (killed, the
# host lost); the next converge returns it (``last_run``) and its plan under the lock clears it.
JOURNAL_FILE = "converge.journal"
JOURNAL_LIMIT = 65536


def read_journal(lock_dir):
    """The last run's record ``{owner, started, phase, cards, applied}``, or None when there is none (or it is
    not one this module wrote: only its own keys are read)."""
    try:
        text = read_text(os.path.join(lock_dir, JOURNAL_FILE), JOURNAL_LIMIT, owned=True)
    except (OSError, ValueError):
        return None
    out = {"owner": "", "started": "", "phase": "", "cards": [], "applied": []}
    for line in text.split("\n"):
        key, _sep, value = line.partition("=")
        value = _one_line(value.strip())[:500]
        if key in ("owner", "started", "phase"):
            out[key] = value
        elif key == "cards":
            out["cards"] = [a for a in value.split(",") if a]
        elif key == "applied":
            out["applied"].append(value)
    return out if out["phase"] in ("apply", "done") else None


def write_journal(lock_dir, record):
    lines = ["owner=%s" % _one_line(record["owner"]), "started=%s" % record["started"], "phase=%s" % record["phase"],
             "cards=%s" % ",".join(record["cards"])] + ["applied=%s" % _one_line(a) for a in record["applied"]]
    try:
        write_atomic(os.path.join(lock_dir, JOURNAL_FILE), ("\n".join(lines) + "\n").encode("utf-8"), 0o600)
    except OSError:
        pass  # the record is a report's aid; the converge goes on without it


class ConvergeRefused(Exception):
    """The host is refused before anything is read or changed (allow-list, declaration, lock)."""


# -- the host lock -----------------------------------------------------------------------------------------------
class HostLock(object):
    """flock(2) on ``<lock_dir>/converge.lock``, held by this process for the module's run (the kernel drops it
    when the process ends, so a crashed run never leaves it behind), with an owner record in
    ``<lock_dir>/converge.owner`` (pid, token, the owner text the caller gives, start time) that a waiter names when it gives
    up. An outside tool holding the same file with flock(1) is honoured the same way."""

    def __init__(self, lock_dir, wait, owner=""):
        self.lock_dir = lock_dir
        self.wait = wait
        self.owner = owner
        self.token = os.urandom(8).hex()
        self.fd = None
        self.waited = 0.0

    @property
    def owner_path(self):
        return os.path.join(self.lock_dir, OWNER_FILE)

    def acquire(self):
        path = os.path.join(self.lock_dir, LOCK_FILE)
        try:
            # The directory is this run's own (0700, checked for owner and mode) and the lock file is opened
            # under the file rule (_safefile): a planted link or FIFO is refused, never followed or waited on.
            make_dir(self.lock_dir, 0o700)
            fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as e:
            raise ConvergeRefused("lock_dir: cannot open the host lock: %s; nothing was changed" % describe(e))
        start = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise ConvergeRefused("lock_dir: cannot lock %s: %s; nothing was changed"
                                          % (path, e.strerror or e))
            if time.monotonic() - start >= self.wait:
                os.close(fd)
                raise ConvergeRefused(self._held_message())
            time.sleep(LOCK_POLL)
        self.waited = round(time.monotonic() - start, 2)
        self.fd = fd
        record = "pid=%d\ntoken=%s\nowner=%s\nstarted=%s\n" % (
            os.getpid(), self.token, _one_line(self.owner), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        try:
            write_atomic(self.owner_path, record.encode("utf-8", "backslashreplace"), 0o600)
        except OSError as e:
            self.release()
            raise ConvergeRefused("lock_dir: cannot write the owner record: %s; nothing was changed" % describe(e))

    def _held_message(self):
        try:
            text = read_text(self.owner_path, OWNER_LIMIT, owned=True)
            # Only the record's own keys are named: a file that is not an owner record says nothing of itself.
            owner = [line.strip() for line in text.split("\n")
                     if line.partition("=")[0].strip() in OWNER_KEYS and line.strip()]
            owner = [_one_line(line)[:200] for line in owner] or ["(no owner record)"]
            age = " (held for %d s)" % max(0, time.time() - os.lstat(self.owner_path).st_mtime)
        except OSError as e:
            owner, age = ["owner record unreadable: %s" % (getattr(e, "strerror", None) or "error")], ""
        return ("the host is locked by another converge (%s)%s; waited %s s for %s. Nothing was changed. A lock "
                "ends when its converge ends or when its holder process dies."
                % (", ".join(owner), age, self.wait, os.path.join(self.lock_dir, LOCK_FILE)))

    def release(self):
        if self.fd is None:
            return
        try:
            mine = ("token=%s" % self.token) in read_text(self.owner_path, OWNER_LIMIT, owned=True).split("\n")
            if mine:
                os.unlink(self.owner_path)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


_NO_DEVICE = re.compile(r"^(?P<name>.*): no device at (?P<addr>[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]) on this host$")
# PCI base classes of functions that are not devices a function is declared on (PCI code and ID assignment spec)
_NOT_A_CARD = {"06": "a PCI bridge", "08": "a system peripheral", "0c": "a serial bus controller",
               "05": "a memory controller", "01": "a storage controller"}


def _what_is_there(sysfs, problem):
    """A declared address that discovery did not report, said as what is there: a bridge named by address is a
    bridge (class 06), not "no device"."""
    m = _NO_DEVICE.match(problem)
    if not m:
        return problem
    cls = (sysfs.read_optional("/sys/bus/pci/devices/%s/class" % m.group("addr")) or "").lower()
    cls = cls[2:] if cls.startswith("0x") else cls
    if len(cls) != 6 or cls.strip("0123456789abcdef"):
        return problem
    what = _NOT_A_CARD.get(cls[:2], "a PCI function of class %s that discovery does not report" % cls[:4])
    return "%s: %s is %s (class %s), not an accelerator; nothing is declared on it" % (
        m.group("name"), m.group("addr"), what, cls[:4])


def _one_line(text):
    """Text for one line of the owner record or a message: control characters and lone surrogates escaped."""
    text = ("%s" % text).encode("utf-8", "backslashreplace").decode("utf-8")
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256 else "?" for c in text)


# -- cards -------------------------------------------------------------------------------------------------------
def card_records(resolution, placement_in_use, safe_mode):
    """One record per assignment: the assignment with ``in_use``, ``in_use_by`` (host and Placement evidence),
    ``blocked`` and ``status``."""
    cards = []
    for a in resolution["assignments"]:
        card = dict(a)
        if not a["change_needed"]:
            card.update(in_use=bool(a["in_use_by"]), blocked=False, status="ok")
        else:
            evidence = list(a["in_use_by"]) + list((placement_in_use or {}).get(a["address"]) or [])
            status = converge_status(True, a["module"] is not None, evidence, safe_mode)
            card.update(in_use=bool(evidence), in_use_by=evidence, blocked=status == "blocked", status=status)
        cards.append(card)
    return cards


def overrides(resolution):
    """Placement overrides for the cards that carry their function: the function trait (also for VFs and
    passthrough, which have no function id), the entry's extra traits and resource class."""
    out = {}
    for a in resolution["assignments"]:
        if a["change_needed"]:
            continue
        ov = {"traits": [a["trait"]] + list(a["placement"]["traits"])}
        if a["placement"]["resource_class"]:
            ov["resource_class"] = a["placement"]["resource_class"]
        out[a["address"]] = ov
    return out


def host_drift(cards, planned, problems):
    """The drift between the declaration and the host, one line each (plan mode)."""
    out = []
    for c in cards:
        if c["status"] == "ok":
            continue
        r = planned.get(c["address"]) or {}
        head = "host %s: %s" % (c["address"], c["function"])
        if c["status"] == "todo" and r.get("failed") and not r.get("refused_in_use"):
            out.append("%s cannot be planned: %s" % (head, r.get("msg")))
        elif c["status"] == "todo" and r.get("refused_in_use"):
            out.append("%s blocked, the module refuses: %s" % (head, r.get("msg")))
        elif c["status"] == "todo":
            out.append("%s (%s) not as declared; plan: %s" % (head, c["kind"], "; ".join(r.get("steps") or [])))
        elif c["status"] == "blocked":
            out.append("%s (%s) not as declared and in use: %s" % (head, c["kind"], "; ".join(c["in_use_by"])))
        else:
            out.append("%s (%s) not as declared; nothing can program it (driver binding of whole devices)"
                       % (head, c["kind"]))
    out.extend("declaration %s" % p for p in problems)
    return out


# -- programming -------------------------------------------------------------------------------------------------
def host_module():
    """The host-module machinery a card's plan runs through, and the programming engines, imported by the first card
    to plan: a host whose cards all carry their functions loads none of them (bench/BENCHMARKS.md).

    The kinds import their engine by name (``kind.program()``, through ``_engines.ENGINES``), which the payload
    builder does not follow, so that a module that only asks the registry does not ship the engines. This module
    programs through every kind: the engines are imported here so that they ship with it
    (tests/unit/plugins/test_module_payloads.py checks that every kind's engine does)."""
    # pylint: disable=import-outside-toplevel,unused-import
    # every engine of _engines.ENGINES, by import statement so that the payload builder ships them
    # (tests/unit/plugins/module_utils/test_engines.py checks this line against the table)
    from ansible_collections.accelops.lifecycle.plugins.module_utils._engines import fpga, nvidia_mig, nvidia_vgpu, sriov, vgpu  # noqa: F401
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _hostmodule
    return _hostmodule


def card_params(card, settings):
    """The programming module's options for one card: its arguments from the resolution, the converge's settings,
    and the module's defaults for the rest (validated by the module's own argument spec). The kind imports its
    engine here, on first use: a host with nothing to change never loads it."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator  # pylint: disable=import-outside-toplevel
    kind = kind_of(card)
    program = kind.program()
    params = dict(card["module_args"])
    for option, setting in kind.converge_settings.items():
        if settings.get(setting) is not None:
            params[option] = settings[setting]
    spec = dict(program.argument_spec)
    spec["root"] = dict(type="path", default="/")
    params["root"] = settings["root"]
    result = ArgumentSpecValidator(spec, **dict((k, v) for k, v in program.module_kwargs.items()
                                                if k in ("required_together", "mutually_exclusive",
                                                         "required_one_of", "required_if"))).validate(params)
    if result.error_messages:
        raise Refusal("%s: %s" % (program.name, "; ".join(result.error_messages)))
    return program, result.validated_parameters


def _card_outcome(card_host, msg, ran):
    """What the run of one card's plan gave, in the shape the summary reads (``ran``: the plan ran, for real or
    in check mode; otherwise it was only made, and ``changed`` says whether it has steps)."""
    r = card_host.result
    refused = bool(r.get("blocked") or r.get("in_use_by"))
    changed = bool(r.get("applied")) if ran else bool(r.get("plan"))
    out = {}
    if msg is not None:
        # what the programming module adds to a failure (rolled_back, still_applied, failed_step, the function
        # read back ...), as its own result would have it
        out = dict((k, v) for k, v in r.items() if k not in ("changed", "plan", "applied", "audit", "diff"))
    out.update({
        "failed": msg is not None, "changed": changed, "refused_in_use": refused and msg is not None,
        "msg": msg or "", "state": r.get("state"), "steps": [s["description"] for s in r.get("plan") or []],
        "applied": list(r.get("applied") or []) if ran else [], "audit": list(r.get("audit") or []),
        "blocked": list(r.get("blocked") or []),
    })
    return out


class Converge(object):
    """One run of ``accelerator_converge`` (``module``: an AnsibleModule with the converge's options)."""

    def __init__(self, module, sysfs):
        self.module = module
        self.p = module.params
        self.sysfs = sysfs
        self.check_mode = module.check_mode
        self.result = {"changed": False, "error": None, "cards": [], "problems": [], "function_names": {},
                       "overrides": {}, "reporters": {}, "planned": {}, "applied": {}, "verify": {}, "kept_drained": [],
                       "drift": [], "discovery": None, "lock": None, "last_run": None}
        self.journal = None  # the lock directory, when this run holds the lock and keeps the run record
        self.inuse = None  # the last discovery's in-use scan (_inuse.InUse)

    def discover(self):
        try:
            found = discover(self.sysfs, libvirt_run_dir=self.p["libvirt_run_dir"], vf_detail="full", keep_inuse=True)
        except OptionError as e:
            raise ConvergeRefused(str(e))
        # the host's in-use evidence, collected once per discovery: every card's engine plan reads the same scan
        self.inuse = found["inuse"]
        return {"schema_version": found["schema_version"], "host": found["host"], "accelerators": found["accelerators"]}

    def run(self):
        """Fills ``self.result``; returns None or the message the module fails with."""
        p = self.p
        try:
            functions = validate(p["functions"], where="functions")
            self.reporting = check_reporting(p["reporting"])
        except DeclarationError as e:
            self.result["error"] = str(e)
            return str(e)
        refusal = allow_list_refusal(p["host"], p["functions"], p["allowed_functions"])
        if refusal:
            self.result["error"] = refusal
            return refusal
        lock = None
        try:
            if p["lock"]:
                lock = HostLock(p["lock_dir"], p["lock_wait"], owner=p["lock_owner"])
                lock.acquire()
                self.result["lock"] = {"path": os.path.join(p["lock_dir"], LOCK_FILE), "waited": lock.waited,
                                       "token": lock.token}
                self.journal = lock_dir = p["lock_dir"]
                self.result["last_run"] = read_journal(lock_dir)
                if self.check_mode and self.result["last_run"] is not None:
                    # the plan under the lock returns the last run's record once: the next record is this run's
                    discard(os.path.join(lock_dir, JOURNAL_FILE))
            else:
                self.result["last_run"] = read_journal(p["lock_dir"]) if p.get("lock_dir") else None
            return self._converge(functions)
        except ConvergeRefused as e:
            self.result["error"] = str(e)
            return str(e)
        finally:
            if lock is not None:
                lock.release()

    def _converge(self, functions):
        p, r = self.p, self.result
        found = self.discover()
        before = resolve(functions, found, validated=True)
        before["problems"] = [_what_is_there(self.sysfs, problem) for problem in before["problems"]]
        cards = card_records(before, p["placement_in_use"], p["safe_mode"])
        r.update(discovery=found, cards=cards, problems=before["problems"], function_names=before["function_names"],
                 overrides=overrides(before), reporters=reporters(before, found, self.reporting))
        only = None if p["cards"] is None else set(p["cards"])
        todo = [c for c in cards if c["status"] == "todo" and (only is None or c["address"] in only)]
        jobs = []
        for card in todo:
            card_host, job, msg = self._plan_card(card)
            if job is not None and self.check_mode:
                # what the programming module's check mode returns: the plan run without its writes
                try:
                    msg = host_module().execute_job(card_host, job)
                finally:
                    card_host.cleanup()
            r["planned"][card["address"]] = _card_outcome(card_host, msg, self.check_mode and job is not None)
            if job is not None and not self.check_mode:
                jobs.append((card, card_host, job))
        if self.check_mode:
            r["drift"] = host_drift(cards, r["planned"], before["problems"])
            r["changed"] = any(o["changed"] for o in r["planned"].values())
            return None
        r["error"] = plan_failure(r["planned"])
        if r["error"]:
            return r["error"]
        ran = []
        record = {"owner": p["lock_owner"], "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "phase": "apply", "cards": [c["address"] for c, _h, j in jobs if j.plan], "applied": []}
        if self.journal and record["cards"]:
            write_journal(self.journal, record)
        for card, card_host, job in jobs:
            try:
                if not job.plan:
                    continue
                msg = host_module().execute_job(card_host, job)
            finally:
                card_host.cleanup()
            r["applied"][card["address"]] = _card_outcome(card_host, msg, True)
            ran.append(card)
            if self.journal:
                outcome = r["applied"][card["address"]]
                record["applied"].append("%s: %s%s" % (card["address"], "; ".join(outcome["applied"]) or "nothing",
                                                       " (failed)" if outcome["failed"] else ""))
                write_journal(self.journal, record)
        if self.journal and record["cards"]:
            record["phase"] = "done"
            write_journal(self.journal, record)
        if not ran:
            return self._failure()
        r["changed"] = any(o["applied"] for o in r["applied"].values())
        now = self.discover()
        after = resolve(functions, now, validated=True)
        r.update(discovery=now, function_names=after["function_names"], overrides=overrides(after),
                 reporters=reporters(after, now, self.reporting))
        carried = set((a["address"], a["function"]) for a in after["assignments"] if not a["change_needed"])
        for card in ran:
            ok = (card["address"], card["function"]) in carried
            r["verify"][card["address"]] = ok
            outcome = r["applied"][card["address"]]
            if outcome["state"] == "partial" or (not outcome["failed"] and not ok):
                r["kept_drained"].append(card["address"])
        return self._failure()

    def _failure(self):
        """The message of a run whose cards did not all converge (None when they did)."""
        r = self.result
        bad = [a for a, o in r["applied"].items() if o["failed"] or not r["verify"].get(a, False)]
        if not bad:
            return None
        return "cards not converged: %s" % "; ".join(
            "%s: %s" % (a, r["applied"][a]["msg"] or "applied but discovery does not show it") for a in bad)

    def _plan_card(self, card):
        """(the card's Host, its Job or None, the refusal message or None)."""
        hostmodule = host_module()
        try:
            program, params = card_params(card, self.p)
        except hostmodule.REFUSALS as e:
            dummy = hostmodule.Host(self.module, card["kind"], params={}, sysfs=self.sysfs)
            return dummy, None, str(e)
        card_host = hostmodule.Host(self.module, program.name, params=params, sysfs=self.sysfs, inuse=self.inuse)
        job, msg = hostmodule.plan(card_host, program.plan)
        if job is None:
            card_host.cleanup()
        return card_host, job, msg
