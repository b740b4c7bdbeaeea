# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Placement over the SDK's Placement proxy (a keystoneauth adapter), on the shared
:class:`_openstack.ServiceClient`: the same bounded retries, timeout and "service unavailable" failure as the
Cyborg and Ironic clients. What is Placement's own here: its microversion, its error bodies, counting writes
apart, and refusing writes in check mode. Controller side."""

from __future__ import annotations

import json
import time

from ansible_collections.accelops.lifecycle.plugins.module_utils._openstack import (
    REQUEST_RETRIES, REQUEST_RETRY_DELAY, ServiceClient, ServiceUnavailable, permission_hint, service_proxy)

MICROVERSION = "1.39"          # the newest Placement 16.0.0 serves; 1.26 (reserved == total) is the minimum
MIN_MICROVERSION = (1, 26)

# The name callers (and tests) catch Placement's "no answer after the retries" by: the shared error, so
# Placement, Cyborg and Ironic fail alike.
PlacementConnectionError = ServiceUnavailable


def error_detail(body):
    """(code, one-line detail) of a Placement error body ``{"errors": [{"code", "detail", "title"}]}``."""
    try:
        err = json.loads(body)["errors"][0]
        detail = (err.get("detail") or err.get("title") or body).strip().replace("\n\n", " ").replace("\n", " ")
        return err.get("code"), detail
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return None, body


class PlacementHTTPError(Exception):
    """An answer Placement gave that the request did not accept (4xx, or a 5xx where no retry was allowed)."""

    def __init__(self, method, path, status, body):
        self.method, self.path, self.status, self.body = method, path, status, body
        self.code, detail = error_detail(body)
        hint = permission_hint("Placement", status)
        Exception.__init__(self, "Placement %s %s: HTTP %s%s: %s%s" % (
            method, path, status, " " + self.code if self.code else "", (detail or "no details")[:500],
            " - " + hint if hint else ""))


class PlacementBodyError(PlacementHTTPError):
    """A 200 whose body is not of the shape the request's API reference gives (a proxy's page, another service)."""

    def __init__(self, method, path, missing):
        PlacementHTTPError.__init__(self, method, path, 200, "")
        self.args = ("Placement %s %s: HTTP 200 but the body is not Placement's answer (%s); is the endpoint "
                     "Placement's? Nothing more was sent for this provider" % (method, path, missing),)


def shaped(body, method, path, **fields):
    """``body`` when it is a mapping with each of ``fields`` of the given type (``resource_provider_generation=int``);
    :class:`PlacementBodyError` naming what is missing otherwise."""
    if not isinstance(body, dict):
        raise PlacementBodyError(method, path, "not a JSON object")
    for name, kind in sorted(fields.items()):
        value = body.get(name)
        if isinstance(value, bool) or not isinstance(value, kind):
            raise PlacementBodyError(method, path, "no %s of type %s" % (name, getattr(kind, "__name__", kind)))
    return body


def discover(conn, retries=REQUEST_RETRIES, delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
    """The SDK's Placement proxy and its endpoint (version discovery: ``GET /``), retried like a request;
    :class:`ServiceUnavailable` when Placement cannot be reached."""
    def get():
        adapter = conn.placement
        return adapter, adapter.get_endpoint()
    return service_proxy(get, "Placement", retries, delay, sleep)


class Client(ServiceClient):
    """Placement requests, counted (``requests``, ``writes``, ``retried``).

    A request that gets no answer (connection refused or dropped, timeout) or a 5xx is retried up to
    ``retries`` times with growing pauses, when repeating it is safe: every request this collection sends is
    idempotent (GET; PUT of a whole trait or inventory set with the generation it read, which a repeat
    turns into a generation conflict that the converger resolves by re-reading; PUT of a trait or resource
    class name; DELETE, where 404 is fine) except POST, which the converger recovers itself
    (``Converger.create``)."""

    service = "Placement"
    microversion = MICROVERSION

    def __init__(self, adapter, microversion=MICROVERSION, read_only=False, retries=REQUEST_RETRIES,
                 retry_delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
        ServiceClient.__init__(self, adapter, retries=retries, retry_delay=retry_delay, sleep=sleep)
        self.microversion = microversion
        self.read_only = read_only
        self.writes = 0

    def count(self, method):
        self.requests += 1
        if method != "GET":
            self.writes += 1

    def fault(self, resp):
        return " ".join((error_detail(getattr(resp, "text", "") or "")[1] or "").split())[:300] or "no details"

    def check_write(self, method, path):
        if method != "GET" and self.read_only:
            raise RuntimeError("a write request (%s %s) in check mode: this is a bug" % (method, path))

    def http_error(self, method, path, status, resp, operation):
        return PlacementHTTPError(method, path, status, resp.text or "")

    def call(self, method, path, body=None, ok=(200,), retry=None, operation=None):
        """Send a request; the parsed JSON body (None when empty). ``retry`` (default: not for POST)
        repeats it after no answer or a 5xx."""
        self.check_write(method, path)
        if retry is None:
            retry = method != "POST"
        status, resp = self.send(method, path, body, operation=operation, retry=retry)
        return self.result(method, path, status, resp, ok)

    def get(self, path):
        return self.call("GET", path)

    def read(self, path, **fields):
        """GET ``path`` and check the body's shape (see :func:`shaped`)."""
        return shaped(self.call("GET", path), "GET", path, **fields)
