# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Benchmark: the events path (docs/events.md), on the harness's RabbitMQ and Placement.

- parse: Nova's own notifications (compute_task.build_instances.error, sent by Nova's code from .venv-nova through
  oslo.messaging to RabbitMQ, as the integration target eda_nova_events sends them) are captured off the bus; then
  (a) the source's parse_notification over those bodies, in a loop (events per second of one core), and (b) the
  event source itself (its main(): AMQP consume, parse, ack, put on ansible-rulebook's queue) draining its queue
  holding N of them: events per second from its first event to its last.
- latency: the rulebook accelops.lifecycle.pools under ansible-rulebook, five simulated hosts (plain trees of lab
  fpga-dfl, one PAC D5005 each, loaded with a function no pool keeps) reported to Placement, five functions
  f1..f5 declared; five times, a boot fails for f<i> (Nova's notification) and the clock runs from the moment
  Nova's notifier is called to the moment Placement's GET /allocation_candidates first offers CUSTOM_FUNCTION_F<i>
  (polled every 0.2 s): the event, the rule, the keeper's plan, drain, program, verify, report. Five functions so
  that the once-a-minute throttle per function does not hold any of them back.

Usage: .venv/bin/python bench/eda_bench.py [--events 2000] [--skip-latency] [--json FILE]
Needs .venv-eda, .venv-nova (tests/harness/setup-venv.sh eda nova), rabbitmq-server and a JDK 17.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "harness"))
import fixtures  # noqa: E402
import servicelib  # noqa: E402

SEND = os.path.join(TOP, "tests", "integration", "targets", "eda_nova_events", "files", "nova_send.py")
SOURCE_DIR = os.path.join(TOP, "extensions", "eda", "plugins", "event_source")
OTHER = "9aeffe5f84570612c000c9660d824272"

# Run by .venv-eda's Python: capture N notifications off the bus, then time the parser and the source.
CHILD = r'''
import asyncio, json, sys, time
import aio_pika
sys.path.insert(0, sys.argv[1])
import nova_notifications as src
url, n, ready_file = sys.argv[2], int(sys.argv[3]), sys.argv[4]

async def capture():
    conn = await aio_pika.connect(url.replace("rabbit://", "amqp://", 1))
    async with conn:
        ch = await conn.channel()
        ex = await ch.declare_exchange("nova", aio_pika.ExchangeType.TOPIC)
        q = await ch.declare_queue("accelops_bench_capture", auto_delete=True)
        await q.bind(ex, routing_key="versioned_notifications.error")
        open(ready_file, "w").close()
        bodies = []
        async with q.iterator() as it:
            async for m in it:
                await m.ack()
                bodies.append(m.body)
                if len(bodies) == n:
                    return bodies

class Counter(asyncio.Queue):
    def __init__(self, n):
        super().__init__()
        self.n, self.times = n, []
        self.done = asyncio.get_event_loop().create_future()
    async def put(self, item):
        self.times.append(time.perf_counter())
        if len(self.times) == self.n and not self.done.done():
            self.done.set_result(None)

async def through_source(bodies):
    args = {"transport_url": url, "queue": "accelops_bench_source"}
    first = asyncio.ensure_future(src.main(Counter(1), args))
    await asyncio.sleep(2)  # the source's queue is declared and bound; it stays (not auto-delete) once it stops
    first.cancel()
    conn = await aio_pika.connect(url.replace("rabbit://", "amqp://", 1))
    async with conn:
        ch = await conn.channel()
        ex = await ch.declare_exchange("nova", aio_pika.ExchangeType.TOPIC)
        for b in bodies:
            await ex.publish(aio_pika.Message(body=b), routing_key="versioned_notifications.error")
    # the queue holds them all: time the source draining it, from its first event to its last
    counter = Counter(len(bodies))
    task = asyncio.ensure_future(src.main(counter, args))
    await asyncio.wait_for(counter.done, 300)
    task.cancel()
    return len(bodies) / (counter.times[-1] - counter.times[0])

bodies = asyncio.run(capture())
parsed = [src.parse_notification(b) for b in bodies]
assert all(e["event_type"] == "compute_task.build_instances.error" and e["function_key"] == "lz4" for e in parsed)
rates = []
for _ in range(5):
    t0 = time.process_time()
    for b in bodies:
        src.parse_notification(b)
    rates.append(len(bodies) / (time.process_time() - t0))
print(json.dumps({"bytes": sorted(len(b) for b in bodies)[len(bodies) // 2],
                  "parse_per_s": sorted(rates)[2], "source_per_s": asyncio.run(through_source(bodies))}))
'''


def _placement(svc, method, path, body=None):
    req = urllib.request.Request(svc["placement_endpoint"] + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"X-Auth-Token": svc["placement_token"], "Content-Type": "application/json",
                                          "OpenStack-API-Version": "placement 1.39"})
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
    return json.loads(text) if text else None


def _candidates(svc, path):
    """Placement's allocation requests for PATH; none while the required trait does not exist yet (400)."""
    try:
        return _placement(svc, "GET", path)["allocation_requests"]
    except urllib.error.HTTPError as exc:
        if exc.code == 400:
            return []
        raise


def parse_bench(svc, work, n):
    ready = os.path.join(work, "capture.ready")
    child = subprocess.Popen([os.path.join(svc["eda_bin"], "python"), "-c", CHILD, SOURCE_DIR,
                              svc["rabbitmq_transport_url"], str(n), ready], stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not os.path.exists(ready) and time.time() < deadline:
        time.sleep(0.1)
    t0 = time.monotonic()
    subprocess.run([svc["nova_python"], SEND, svc["rabbitmq_transport_url"], "lz4:%d" % n], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    send_s = time.monotonic() - t0
    out = child.communicate(timeout=600)[0]
    res = json.loads(out.strip().splitlines()[-1])
    res.update({"events": n, "nova_send_s": send_s})
    print("parse: %d Nova notifications (median %d bytes): parse_notification %.0f events/s (one core, CPU time); "
          "the source through RabbitMQ %.0f events/s; Nova's notifier sent them in %.1f s"
          % (n, res["bytes"], res["parse_per_s"], res["source_per_s"], send_s), flush=True)
    return res


def latency_bench(svc, work, rounds=5):
    sys.path.insert(0, os.path.join(TOP, "tests", "simulator"))
    import accelsim  # pylint: disable=import-outside-toplevel
    import hashlib  # pylint: disable=import-outside-toplevel
    import openstack  # pylint: disable=import-outside-toplevel
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _discovery  # pylint: disable=import-outside-toplevel
    from ansible_collections.accelops.lifecycle.plugins.module_utils import _placement as P  # pylint: disable=import-outside-toplevel

    names = ["f%d" % (i + 1) for i in range(rounds)]
    hosts = ["ev%d" % (i + 1) for i in range(rounds)]
    functions, allowed = [], list(names)
    for i, name in enumerate(names):
        afu = "%032x" % (0xf0000000000000000000000000000000 + i + 1)
        gbs = os.path.join(work, name + ".gbs")
        accelsim.make_gbs(gbs, "9346116df8f65a1ba2b6f1ec3a8a0b5e", afu)
        sha = hashlib.sha256(open(gbs, "rb").read()).hexdigest()
        allowed.append(sha)
        functions.append({"name": name, "match": {"family": "fpga", "vendor_id": "8086", "device_id": "0b2b"},
                          "fpga": {"bitstream": gbs, "sha256": sha, "function_id": afu}})
    reported = []
    for name in hosts:
        lab = accelsim.load_lab("fpga-dfl")
        next(f for f in lab["functions"] if f.get("fpga"))["fpga"]["afu_id"] = OTHER
        root = os.path.join(work, "hosts", name)
        accelsim.render_tree(lab, root)
        _placement(svc, "POST", "/resource_providers", {"name": name})
        reported.append({"host": name, "providers": P.desired_providers(name, _discovery.discover(root=root),
                                                                        function_names={})})
    conn = openstack.connect(auth_type="admin_token", auth={"endpoint": svc["placement_endpoint"],
                                                            "token": svc["placement_token"]},
                             placement_endpoint_override=svc["placement_endpoint"])
    P.converge(conn.placement, reported, {})
    with open(os.path.join(work, "inventory.yml"), "w") as f:
        json.dump({"pool": {"vars": {
            "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
            "accelerator_host_placement_endpoint": svc["placement_endpoint"],
            "accelerator_host_placement_token": svc["placement_token"],
            "accelerator_host_fpga_persistent": False, "accelerator_host_allowed_functions": allowed,
            "function_pools_functions": functions, "function_pools_pools": []},
            "hosts": dict((h, {"accelerator_host_root": os.path.join(work, "hosts", h)}) for h in hosts)}}, f)
    with open(os.path.join(work, "events.yml"), "w") as f:
        f.write("accelops_reconcile_every: 3600\n")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.join(work, "collections"), JAVA_HOME=svc["eda_java_home"],
               NOVA_TRANSPORT_URL=svc["rabbitmq_transport_url"], ANSIBLE_NOCOLOR="1",
               PATH="%s:%s:%s" % (svc["eda_bin"], os.path.dirname(sys.executable), os.environ.get("PATH", "")))
    log_path = os.path.join(work, "rulebook.log")
    with open(log_path, "w") as log:
        rulebook = subprocess.Popen(["ansible-rulebook", "-r", "accelops.lifecycle.pools", "-i", "inventory.yml",
                                     "--vars", "events.yml", "--env-vars", "NOVA_TRANSPORT_URL", "-v"],
                                    cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    times = []
    try:
        servicelib.wait_until(lambda: "nova_notifications: reading" in open(log_path).read(), 120, "ansible-rulebook",
                              log_path, rulebook.pid)
        for name in names:
            sent = subprocess.run([svc["nova_python"], SEND, svc["rabbitmq_transport_url"], "%s:1" % name],
                                  check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t0 = float(sent.stderr.strip().splitlines()[-1].split()[-1])
            path = "/allocation_candidates?resources=FPGA:1&required=CUSTOM_FUNCTION_%s" % name.upper()
            deadline = time.time() + 600
            while not _candidates(svc, path):
                if time.time() > deadline:
                    raise SystemExit("no %s candidate after 600 s; rulebook log: %s" % (name, log_path))
                time.sleep(0.2)
            times.append(time.time() - t0)
            print("latency: %s: notification -> candidate %.1f s (load %.2f)" % (name, times[-1], os.getloadavg()[0]),
                  flush=True)
            # the keeper's run finishes (reports) after the card is offered: wait for it so runs do not overlap
            servicelib.wait_until(lambda n=name: open(log_path).read().count("PLAY RECAP") >= names.index(n) + 1,
                                  600, "the keeper's run", log_path, rulebook.pid)
    finally:
        os.killpg(rulebook.pid, 15)
        rulebook.wait(timeout=30)
    print("latency: median of %d: %.1f s" % (len(times), statistics.median(times)), flush=True)
    return {"seconds": times, "median": statistics.median(times)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--skip-latency", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    fixtures.put_collection_on_path()
    work = tempfile.mkdtemp(prefix="accelops-eda-")
    coll = os.path.join(work, "collections", "ansible_collections", "accelops")
    os.makedirs(coll)
    os.symlink(TOP, os.path.join(coll, "lifecycle"))
    servicelib.STARTUP_TIMEOUT = max(servicelib.STARTUP_TIMEOUT, 120.0)
    state = os.path.join(work, "services")
    svc = servicelib.start(state, ["placement", "rabbitmq"])
    try:
        res = {"machine": "%s, %d CPUs, Python %s, load %.2f at start" % (
            platform.machine(), os.cpu_count() or 0, platform.python_version(), os.getloadavg()[0])}
        res["parse"] = parse_bench(svc, work, args.events)
        if not args.skip_latency:
            res["latency"] = latency_bench(svc, work)
    finally:
        servicelib.stop(state)
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
