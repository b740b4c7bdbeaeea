# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A fault-injecting HTTP proxy on 127.0.0.1 between the modules and a real service (standard library only).

It forwards every request to ``upstream`` and, when the fault plan says so, injects one of:

``drop``
    close the client's connection without forwarding (the request never reaches the service).
``drop_after``
    forward, let the service act, then close the client's connection without answering (the change
    happened; the client does not know).
``500``, ``502``, ``503``, ``504``
    answer that status with a JSON error body, without forwarding.
``stall``
    wait ``stall_s`` seconds, then forward (a client with a shorter timeout gives up first; the request
    still reaches the service afterwards, as a slow server would process it).
``restart``
    drop this request and restart the service (``restart`` callback: stop it, start it again, return the
    new upstream URL); while it is down, connections are closed as a stopped service's would be refused.

The plan is a callable ``plan(n, method, path) -> fault or None`` (``n`` counts requests from 1) or a
dict ``{n: fault}``. ``headers_rewrite`` maps header names to callables (value -> value) applied before
forwarding (the secrets tests swap a caller's token for the service's).

Every request and fault is counted in :attr:`log` (``(n, method, path, fault, status)``).
"""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("drop", "drop_after", "500", "502", "503", "504", "stall", "restart")
_HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers",
        "transfer-encoding", "upgrade", "content-length"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class FaultProxy(object):
    def __init__(self, upstream, restart=None, stall_s=3.0, headers_rewrite=None):
        self.upstream = upstream.rstrip("/")
        self.restart_cb = restart
        self.stall_s = stall_s
        self.headers_rewrite = headers_rewrite or {}
        self.plan = None
        self.lock = threading.Lock()
        self.count = 0
        self.log = []
        self.faults = {}
        self.down = threading.Event()   # set while the service restarts
        self.restarts = 0
        self.inflight = 0
        self.server = None
        self.thread = None
        self.url = None

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                proxy.handle(self)

            do_PUT = do_POST = do_DELETE = do_PATCH = do_HEAD = do_GET

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="faultproxy", daemon=True)
        self.thread.start()
        return self.url

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    # -- plan and counters ----------------------------------------------------------------------------
    def set_plan(self, plan):
        """``plan``: None (no faults), a dict {n: fault}, or a callable (n, method, path) -> fault."""
        with self.lock:
            self.plan = plan
            self.count = 0
            self.log = []

    def injected(self):
        return [e for e in self.log if e[3]]

    def _decide(self, method, path):
        with self.lock:
            self.count += 1
            n = self.count
            plan = self.plan
        if plan is None:
            fault = None
        elif isinstance(plan, dict):
            fault = plan.get(n)
        else:
            fault = plan(n, method, path)
        if fault is not None and fault not in FAULTS:
            raise ValueError("unknown fault %r" % fault)
        if fault:
            with self.lock:
                self.faults[fault] = self.faults.get(fault, 0) + 1
        return n, fault

    def wait_idle(self, timeout=30.0):
        """Wait until no request is in flight (a stalled one has reached the service) and no restart runs."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                busy = self.inflight
            if not busy and not self.down.is_set():
                return True
            time.sleep(0.02)
        return False

    # -- the request path -----------------------------------------------------------------------------
    def handle(self, h):
        with self.lock:
            self.inflight += 1
        try:
            self._handle(h)
        finally:
            with self.lock:
                self.inflight -= 1

    def _handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else None
        n, fault = self._decide(h.command, h.path)
        entry = [n, h.command, h.path, fault, None]
        self.log.append(entry)
        if self.down.is_set() or fault == "drop":
            entry[4] = "dropped"
            return self._abort(h)
        if fault == "restart":
            entry[4] = "dropped"
            self.down.set()
            threading.Thread(target=self._restart, daemon=True).start()
            return self._abort(h)
        if fault in ("500", "502", "503", "504"):
            entry[4] = int(fault)
            payload = json.dumps({"errors": [{"status": int(fault), "title": "injected fault",
                                              "detail": "faultproxy answered %s" % fault}]}).encode()
            return self._answer(h, int(fault), [("Content-Type", "application/json")], payload)
        if fault == "stall":
            time.sleep(self.stall_s)
        try:
            status, headers, payload = self._forward(h, body)
        except (OSError, http.client.HTTPException):
            entry[4] = "upstream down"
            return self._abort(h)
        entry[4] = status
        if fault == "drop_after":
            return self._abort(h)
        try:
            self._answer(h, status, headers, payload)
        except OSError:  # the client gave up (a stalled request it timed out on)
            h.close_connection = True

    def _forward(self, h, body):
        u = urllib.parse.urlsplit(self.upstream)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        try:
            headers = {}
            for k, v in h.headers.items():
                if k.lower() in _HOP or k.lower() == "host":
                    continue
                rw = self.headers_rewrite.get(k.lower())
                headers[k] = rw(v) if rw else v
            if body is not None:
                headers["Content-Length"] = str(len(body))
            conn.request(h.command, h.path, body=body, headers=headers)
            r = conn.getresponse()
            payload = r.read()
            return r.status, [(k, v) for k, v in r.getheaders() if k.lower() not in _HOP], payload
        finally:
            conn.close()

    @staticmethod
    def _answer(h, status, headers, payload):
        h.send_response_only(status)
        for k, v in headers:
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)
        h.wfile.flush()

    @staticmethod
    def _abort(h):
        """Close the connection without an answer (RST, as a crashed or stopped server's would be)."""
        h.close_connection = True
        try:
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _restart(self):
        try:
            new = self.restart_cb() if self.restart_cb else None
            if new:
                self.upstream = new.rstrip("/")
            self.restarts += 1
        finally:
            self.down.clear()
