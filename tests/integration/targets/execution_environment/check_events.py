# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the outcome and the event stream of a job that ansible-runner ran (runme.sh).

Usage: python check_events.py PRIVATE_DATA_DIR IDENT converge|noop HOST...

Reads what AWX reads: artifacts/IDENT/status and rc, and the events in artifacts/IDENT/job_events/*.json.
Exits 1 with the reasons when the job is not what it should be.
"""

import json
import os
import sys

ROLE = "accelerator_host"
PLAN = "Plan the host (discover, resolve the declaration, plan each card to change; changes nothing)"
APPLY = "Change the cards (the lock, a new plan, the changes, verified by discovering the host again)"
REPORT = "Report the batch's hosts to Placement in one call (inventories, function traits; undrain what this run drained)"
SUMMARY = "Show the summary (and fail the host when the converge did not reach the declaration, or on drift when asked)"


def read(path):
    with open(path) as f:
        return f.read()


def load_events(artifacts):
    events_dir = os.path.join(artifacts, "job_events")
    events = []
    for name in os.listdir(events_dir):
        if name.endswith(".json"):
            events.append(json.loads(read(os.path.join(events_dir, name))))
    return sorted(events, key=lambda e: e["counter"])


def task_events(events, kind, task):
    return [e for e in events if e["event"] == kind and e["event_data"].get("task") == task]


def check(pdd, ident, mode, hosts):
    problems = []
    artifacts = os.path.join(pdd, "artifacts", ident)
    status = read(os.path.join(artifacts, "status")).strip()
    rc = read(os.path.join(artifacts, "rc")).strip()
    if status != "successful" or rc != "0":
        problems.append("status %r, rc %r: expected 'successful', '0'" % (status, rc))

    events = load_events(artifacts)
    counters = [e["counter"] for e in events]
    if counters != list(range(1, len(events) + 1)):
        problems.append("the event counters are not 1..%d without gaps: %s" % (len(events), counters))
    # (verbose events: output outside the callback's events, such as warnings, may come before or after)
    flow = [e for e in events if e["event"] != "verbose"]
    if not flow or flow[0]["event"] != "playbook_on_start":
        problems.append("the first event is not playbook_on_start")
    elif os.path.basename(flow[0]["event_data"].get("playbook", "")) != "converge.yml":
        problems.append("playbook_on_start names %r, not converge.yml" % flow[0]["event_data"].get("playbook"))
    if any(e["runner_ident"] != ident for e in events):
        problems.append("events of another ident in the stream")
    plays = [e["event_data"].get("play") for e in events if e["event"] == "playbook_on_play_start"]
    if plays != ["Converge accelerator hosts"]:
        problems.append("plays started: %s" % plays)
    bad = [(e["event"], e["event_data"].get("host"), e["event_data"].get("task")) for e in events
           if e["event"] in ("runner_on_failed", "runner_on_unreachable", "runner_item_on_failed")]
    if bad:
        problems.append("failed or unreachable: %s" % bad)

    stats = [e for e in events if e["event"] == "playbook_on_stats"]
    if len(stats) != 1 or flow[-1]["event"] != "playbook_on_stats":
        problems.append("not exactly one playbook_on_stats, as the last event")
    else:
        data = stats[0]["event_data"]
        if data.get("failures") or data.get("dark"):
            problems.append("playbook_on_stats: failures %s, unreachable %s" % (data.get("failures"), data.get("dark")))
        missing = sorted(set(hosts) - set(data.get("ok", {})))
        if missing:
            problems.append("playbook_on_stats: no ok tasks for %s" % missing)
        changed = {h: data.get("changed", {}).get(h, 0) for h in hosts}
        if mode == "converge" and not all(changed.values()):
            problems.append("playbook_on_stats: a host changed nothing in the converge: %s" % changed)
        if mode == "noop" and any(changed.values()):
            problems.append("playbook_on_stats: a host changed something in the no-op run: %s" % changed)

    for host in hosts:
        found = [e for e in task_events(events, "runner_on_ok", PLAN) if e["event_data"].get("host") == host]
        if len(found) != 1 or found[0]["event_data"].get("role") != ROLE:
            problems.append("%s: not one runner_on_ok of the role's plan (its discovery)" % host)
        if not [e for e in task_events(events, "runner_on_ok", SUMMARY) if e["event_data"].get("host") == host]:
            problems.append("%s: no runner_on_ok of the role's summary" % host)
        applied = [e for e in task_events(events, "runner_on_ok", APPLY) if e["event_data"].get("host") == host]
        # the change runs once, after the plan, only when a card must change; its result names what it did per card
        if mode == "converge" and [e["event_data"]["res"].get("changed") and bool(e["event_data"]["res"].get("applied"))
                                   for e in applied].count(True) != 1:
            problems.append("%s: not one changed runner_on_ok of the change, with what it applied" % host)
        if mode == "noop" and applied:
            problems.append("%s: the cards were changed in the no-op run" % host)

    report = task_events(events, "runner_on_ok", REPORT)
    if len(report) != 1:
        problems.append("not one runner_on_ok of the batch's report to Placement: %d" % len(report))
    elif report[0]["event_data"]["res"].get("changed") != (mode == "converge"):
        problems.append("the report to Placement changed=%s in the %s run" % (report[0]["event_data"]["res"].get("changed"), mode))
    return problems, len(events)


def main():
    pdd, ident, mode = sys.argv[1:4]
    hosts = sys.argv[4:]
    problems, count = check(pdd, ident, mode, hosts)
    for p in problems:
        print("job %s: %s" % (ident, p))
    if problems:
        sys.exit(1)
    print("job %s: %s, %d events checked" % (ident, mode, count))


if __name__ == "__main__":
    main()
