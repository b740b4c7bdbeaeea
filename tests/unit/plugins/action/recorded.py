# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the accelerator_host role hands the accelerator_host_batch action, built from per-host records the tests
write: each host's settings, plan and apply by inventory name, and the batch's Placement results (shared by the
batch's hosts: a run_once task's result is registered on each)."""

from __future__ import annotations

from ansible_collections.accelops.lifecycle.plugins.plugin_utils import _host_batch

SHARED = ("read", "check", "drain", "report")


def host_record(name, settings, **results):
    """One host's record: ``settings`` (the accelerator_host_settings result) and its registered results
    (``plan``, ``apply``, and the batch's ``read``, ``check``, ``drain``, ``report`` as the host sees them)."""
    return dict(results, name=name, settings=settings)


def batch_args(hosts):
    """The accelerator_host_batch options (settings, plans, applied, placement_*) of a batch of host records."""
    args = {"settings": {}, "plans": {}, "applied": {}}
    for h in hosts:
        args["settings"][h["name"]] = h.get("settings")
        args["plans"][h["name"]] = h.get("plan")
        args["applied"][h["name"]] = h.get("apply")
        for key in SHARED:
            if h.get(key) is not None:
                args.setdefault("placement_" + key, h[key])
    return args


def batch(hosts):
    args = batch_args(hosts)
    return _host_batch.Batch(args["settings"], plans=args["plans"], applied=args["applied"],
                             read=args.get("placement_read"), check=args.get("placement_check"),
                             drain=args.get("placement_drain"), report=args.get("placement_report"))


def step(hosts, name):
    """The batch step ``name`` of _host_batch (reads, check, drain, apply, report, hosts) for these hosts."""
    return getattr(_host_batch, name)(batch(hosts))


def state(h):
    """One host's state (_host_batch.host_state through the batch, as the action decides it)."""
    [(_item, s)] = batch([h]).states()
    return s
