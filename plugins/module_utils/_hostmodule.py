# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host-module base: a programming module (``sriov_vfs``, ``vgpu``, ``fpga_program``) is an argument spec
and a plan hook; this owns the rest of the run.

    def plan(host):                      # host: Host (params, sysfs, auditor, files, tools, workdir, result)
        ...
        host.result["address"] = addr    # the module's own result keys (also returned on failure)
        return Job(plan_)                # optionally finish= and failed= (below)

    def main():
        run_host_module("sriov_vfs", dict(address=dict(type="str", required=True), ...), plan, ranges=...)

The run: plan (a :class:`_plan.Refusal`, ``SysfsError`` or ``ToolError`` fails naming the cause, never a
traceback) -> diff mode from the plan -> check mode returns the plan without running it -> the plan runs
through :func:`_plan.execute` (a failing step rolls back the steps done) -> ``Job.finish`` (what only the run
itself can tell: the function read back, a follow-up plan run with :func:`_plan.execute_more`) ->
``systemctl daemon-reload`` when boot units changed under ``/`` -> the result.

The result always has ``changed``, ``plan``, ``applied``, ``rolled_back``, ``rollback_failed`` and ``audit`` (the
audit lines, one per change, also written to the system log), plus the module's keys. After a failed step it
also has ``failed_step``, ``error``, ``state`` (``unchanged`` or ``partial``) and ``still_applied``; ``changed``
is then true only when something is still in effect.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ansible_collections.accelops.lifecycle.plugins.module_utils._audit import Auditor
from ansible_collections.accelops.lifecycle.plugins.module_utils._host import (
    LIBVIRT_RUN_DIR_OPTION,
    host_argument_spec,
    host_sysfs,
)
from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule
from ansible_collections.accelops.lifecycle.plugins.module_utils._persist import UNIT_DIR, Files
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import PlanFailed, Refusal, execute, execute_more
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import SysfsError
from ansible_collections.accelops.lifecycle.plugins.module_utils._tools import ToolError, ToolRunner

# What a plan hook may raise to refuse: each carries a readable message (the base adds ``extra`` to the result).
REFUSALS = (Refusal, SysfsError, ToolError)


class Job(object):
    """What a plan hook returns.

    ``plan``: the :class:`_plan.Plan`; ``finish(host)``: called after the plan ran (in check mode too, where it
    reports what would be), returns None or a follow-up plan that only the run could compute (run when not in
    check mode; when it fails, ``plan`` is undone too); ``failed(host, error)``: the message of a failed step
    (the base's :class:`_plan.PlanFailed` as given), may add result keys.
    """

    def __init__(self, plan, finish=None, failed=None):
        self.plan = plan
        self.finish = finish
        self.failed = failed


# The options of a programming module whose changes go through vendor tools and survive a reboot by boot files
# (sriov_vfs, vgpu), with their value ranges: added by :func:`tool_program`.
TOOL_PROGRAM_OPTIONS = dict(
    force=dict(type="bool", default=False),
    persistent=dict(type="bool", default=True),
    persist_root=dict(type="path"),
    libvirt_run_dir=LIBVIRT_RUN_DIR_OPTION,
    tool_timeout=dict(type="int", default=60),
)
TOOL_PROGRAM_RANGES = {"tool_timeout": (0, 86400, "seconds")}


class Program(object):
    """A programming module as data: its name, options (the host base's ``root`` is added), plan hook, value
    ranges and the AnsibleModule keywords (``required_together`` ...). The module's ``main`` runs it with
    :func:`run_program`; ``accelerator_converge`` runs the same hook for each card it programs."""

    def __init__(self, name, argument_spec, plan, ranges=None, paths=(), **module_kwargs):
        self.name = name
        self.argument_spec = argument_spec
        self.plan = plan
        self.ranges = ranges
        self.paths = paths
        self.module_kwargs = module_kwargs


class Host(object):
    """One run of a host module: its options, the host root, the audit trail, boot files, tools and result.

    ``params`` and ``sysfs`` default to the module's own; a module that programs several cards in one run
    (``accelerator_converge``) gives each card's run its own options over the module's host root."""

    def __init__(self, module, name, params=None, sysfs=None, inuse=None):
        self.module = module
        # the host's in-use evidence when the caller already collected it (the converge's, for every card it plans):
        # the engines read it instead of scanning the host again; None: they scan on first use
        self.inuse = inuse
        self.name = name
        self.params = module.params if params is None else params
        self.check_mode = module.check_mode
        self.sysfs = sysfs if sysfs is not None else host_sysfs(module)
        self.auditor = Auditor(module, name)
        self.result = {"changed": False, "plan": [], "applied": [], "rolled_back": [], "rollback_failed": [],
                       "audit": self.auditor.lines}
        self._files = None
        self._workdir = None

    def run(self, argv):
        """The command runner every tool goes through (``C`` locale: tools' messages are parsed and quoted)."""
        return self.module.run_command(argv, environ_update={"LC_ALL": "C"})

    @property
    def files(self):
        """The boot files (:class:`_persist.Files`) under ``persist_root`` (default: ``root``)."""
        if self._files is None:
            try:
                self._files = Files(self.sysfs, self.params.get("persist_root"))
            except ValueError as e:
                raise Refusal(str(e))
        return self._files

    def tools(self, timeout, require_limit=False):
        """A :class:`_tools.ToolRunner` for this run (``require_limit``: a tool that can leave a device half
        done is never run without coreutils ``timeout``)."""
        return ToolRunner(self.sysfs, run=self.run, timeout=timeout, timeout_bin=self.module.get_bin_path("timeout") or "",
                          require_limit=require_limit)

    def workdir(self):
        """A private directory (0700) for this run, removed at its end."""
        if self._workdir is None:
            self._workdir = tempfile.mkdtemp(prefix="%s-" % self.name, dir=self.module.tmpdir)
            os.chmod(self._workdir, 0o700)
        return self._workdir

    def cleanup(self):
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None


def tool_program(name, argument_spec, plan_hook, ranges):
    """A :class:`Program` with :data:`TOOL_PROGRAM_OPTIONS` added to its own options."""
    spec = dict(argument_spec)
    spec.update(TOOL_PROGRAM_OPTIONS)
    all_ranges = dict(ranges)
    all_ranges.update(TOOL_PROGRAM_RANGES)
    return Program(name, spec, plan_hook, ranges=all_ranges, paths=("libvirt_run_dir",))


def run_program(program):
    """The ``main`` of a programming module."""
    run_host_module(program.name, program.argument_spec, program.plan, ranges=program.ranges, paths=program.paths,
                    **program.module_kwargs)


def run_host_module(name, argument_spec, plan_hook, ranges=None, paths=(), **kwargs):
    """Build the module (the ``root`` option added to ``argument_spec``), run ``plan_hook`` and exit."""
    module = AccelopsModule(argument_spec=host_argument_spec(**argument_spec), ranges=ranges, paths=paths,
                            supports_check_mode=True, **kwargs)
    host = Host(module, name)
    try:
        msg = run(host, plan_hook)
    finally:
        host.cleanup()
    if msg is not None:
        module.fail_json(msg=msg, **host.result)
    module.exit_json(**host.result)


def run(host, plan_hook):
    """One run (see the module docstring); fills ``host.result`` and returns None or the failure message."""
    job, msg = plan(host, plan_hook)
    if job is None:
        return msg
    return execute_job(host, job)


def plan(host, plan_hook):
    """The plan half of :func:`run`: ``(job, None)``, or ``(None, message)`` when the hook refused (the
    refusal's ``extra`` is in ``host.result``)."""
    r = host.result
    try:
        job = plan_hook(host)
    except REFUSALS as e:
        r.update(getattr(e, "extra", {}))
        return None, str(e)
    r["plan"] = job.plan.describe()
    if host.module._diff and job.plan:  # pylint: disable=protected-access
        r["diff"] = job.plan.diff()
    return job, None


def execute_job(host, job):
    """The run half of :func:`run` (check mode: what would run); returns None or the failure message."""
    r = host.result
    plans = [job.plan]
    done = None
    try:
        done = execute(job.plan, host.check_mode)
        more = job.finish(host) if job.finish is not None else None
        if more and not host.check_mode:
            extra = execute_more(job.plan, more)
            plans.append(more)
            done["steps"] += extra["steps"]
            done["applied"] += extra["applied"]
            done["changed"] = True
    except PlanFailed as e:
        r.update(e.result)
        r["plan"] = r.pop("steps", [])
        r["changed"] = bool(e.result.get("still_applied"))
        return job.failed(host, e) if job.failed is not None else str(e)
    except REFUSALS as e:
        # after the plan ran: what ran stays in effect and is reported
        if done is not None:
            r.update(done)
            r["plan"] = r.pop("steps", [])
        r.update(getattr(e, "extra", {}))
        return str(e)
    r.update(done)
    r["plan"] = r.pop("steps", [])
    if not host.check_mode:
        _daemon_reload(host, plans)
    return None


def _daemon_reload(host, plans):
    """Tell a running systemd about changed boot units (only for the real /etc: a lab root has no systemd)."""
    if host._files is None or host._files.root != "/":  # pylint: disable=protected-access
        return
    if not any(s.target and s.target.startswith(UNIT_DIR + "/") for p in plans for s in p.steps):
        return
    systemctl = host.module.get_bin_path("systemctl")
    if systemctl:
        rc, _out, err = host.module.run_command([systemctl, "daemon-reload"])
        if rc != 0:
            host.module.warn("systemctl daemon-reload failed: %s" % err.strip())
