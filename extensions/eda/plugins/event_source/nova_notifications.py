# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Event source for ansible-rulebook: Nova's versioned notifications from the cloud's RabbitMQ."""

from __future__ import annotations

DOCUMENTATION = r"""
---
short_description: Nova's versioned notifications from RabbitMQ, as events a rulebook can match
description:
  - Listens to the notifications Nova publishes with oslo.messaging's C(messagingv2) driver and
    C(notification_format = versioned) (nova.conf C([oslo_messaging_notifications]); the role
    C(accelops.lifecycle.nova_compute_config) renders it with C(nova_compute_config_notifications_enabled)).
  - Nova publishes them on the topic exchange O(exchange) with routing keys C(<topic>.<priority>)
    (C(versioned_notifications.error), C(versioned_notifications.info)). The source declares a queue of its own
    (O(queue)) bound to those keys, so it takes no message from any other consumer of the same topic (Ceilometer,
    Searchlight, another rulebook).
  - Each notification becomes one event (see the event fields below). A message that is not an oslo.messaging
    notification, or whose payload is not what Nova sends, is logged (its message id and why, never its body, which
    carries the request context) and dropped; the source goes on.
  - When the connection is lost (the bus restarts, a failover) the source reconnects, trying each host of
    O(transport_url) in turn with a growing delay up to O(reconnect_max_delay) seconds. A non-durable queue (the
    default) is lost with the broker's restart and so are the notifications in it: run the periodic reconciliation
    rule of C(accelops.lifecycle.pools) so that a lost event costs latency, not capacity.
  - The AMQP client is aio-pika (PyPI C(aio-pika), asyncio), which the decision environment must have.
  - "Event fields: C(event_type), C(priority), C(publisher_id), C(message_id), C(timestamp), C(instance_uuid),
    C(host) (the instance's, when the payload has one), C(state), C(reason) (C(exception), C(message)),
    C(request) (C(groups): the flavor's extra specs that ask for devices, as device profile groups: the unsuffixed
    group then each numbered one, with C(resources:<CLASS>), C(trait:<TRAIT>), C(pci_passthrough:alias);
    C(functions): the names of the C(trait:CUSTOM_FUNCTION_<NAME>: required) traits, lower case;
    C(device_profile): C(accel:device_profile), empty when none; C(pci_aliases): the C(pci_passthrough:alias)
    entries; C(asks_for_devices): whether any of these is there; C(flavor)), and C(function_key) (the functions joined with commas, empty when none)."
options:
  transport_url:
    description:
      - The bus as nova.conf names it, C(rabbit://USER:PASS@HOST:PORT[,USER:PASS@HOST:PORT...]/VHOST)
        (C([oslo_messaging_notifications] transport_url), else C([DEFAULT] transport_url)); C(amqp://) and
        C(amqps://) are read the same. Several hosts are tried in turn.
      - Secret (it carries the password): give it from a vault or an environment variable, never in a
        rulebook in clear. It is never printed.
    type: str
    required: true
  exchange:
    description: The control exchange (nova.conf C([DEFAULT] control_exchange)).
    type: str
    default: nova
  topic:
    description: The notification topic (nova.conf C([notifications] versioned_notifications_topics)).
    type: str
    default: versioned_notifications
  priorities:
    description: The priorities to bind (C(<topic>.<priority>)); the failures this collection reacts to are C(error),
      instance deletions C(info).
    type: list
    elements: str
    default: [error, info]
  event_types:
    description: Only these event types become events (the rest are acknowledged and dropped); empty for all.
    type: list
    elements: str
    default: [compute_task.build_instances.error, instance.delete.end]
  queue:
    description: The name of this source's own queue. Two rulebooks that must each see every notification need two
      names; two replicas of one rulebook that share the work share one name.
    type: str
    default: accelops_eda_nova_notifications
  durable:
    description:
      - Declare the exchange and the queue durable, as nova.conf's C([oslo_messaging_rabbit] amqp_durable_queues)
        does for the exchange (they must agree: RabbitMQ refuses to redeclare an exchange otherwise).
    type: bool
    default: false
  queue_expires:
    description: Seconds after which RabbitMQ deletes the queue once no source reads it (C(x-expires)), so a rulebook
      that is gone leaves nothing that grows.
    type: int
    default: 3600
  queue_max_length:
    description: The most notifications the queue keeps while the source is away (C(x-max-length)); older ones are
      dropped first.
    type: int
    default: 10000
  ssl:
    description: TLS to the broker (nova.conf C([oslo_messaging_rabbit] ssl)); implied by C(amqps://).
    type: bool
    default: false
  ssl_ca_file:
    description: CA bundle to verify the broker with (C(ssl_ca_file)); the system's when unset.
    type: str
  ssl_cert_file:
    description: Client certificate (C(ssl_cert_file)).
    type: str
  ssl_key_file:
    description: Its private key (C(ssl_key_file)).
    type: str
  ssl_verify:
    description: Verify the broker's certificate and name. Turn off only for a test bus.
    type: bool
    default: true
  reconnect_max_delay:
    description: The longest wait, in seconds, between two connection attempts.
    type: float
    default: 30
  heartbeat:
    description: AMQP heartbeat, in seconds (a dead connection is noticed within about twice that).
    type: int
    default: 30
"""

EXAMPLES = r"""
- name: React to Nova
  hosts: all
  sources:
    - accelops.lifecycle.nova_notifications:
        transport_url: "{{ NOVA_TRANSPORT_URL }}"   # ansible-rulebook --env-vars NOVA_TRANSPORT_URL
        ssl: true
        ssl_ca_file: /etc/pki/tls/certs/rabbitmq-ca.pem
  rules:
    - name: A boot found no host
      condition: >-
        event.event_type == "compute_task.build_instances.error" and event.reason.exception == "NoValidHost"
      action:
        debug:
          msg: "{{ event.instance_uuid }} asked for {{ event.request.functions }}"
"""

import asyncio
import json
import logging
import re
import ssl as ssl_lib
import urllib.parse
from typing import Any, Dict, List, Optional

LOG = logging.getLogger("accelops.lifecycle.nova_notifications")

# Flavor extra specs that ask for a device: granular groups are resourcesN:/traitN: (Nova's
# nova/scheduler/utils.py ResourceRequest), the device profile and PCI aliases are flavor-wide.
_GROUPED_SPEC = re.compile(r"^(resources|trait)([A-Za-z0-9_-]*):(.+)$")
_FUNCTION_TRAIT = re.compile(r"^CUSTOM_FUNCTION_([A-Z0-9_]+)$")
# A notification bigger than this is not Nova's (its largest, instance.update with a full flavor, is a few kB).
MAX_BODY = 1 << 20


class DroppedMessage(ValueError):
    """A message that is not a notification this source understands; the reason says why (never the body)."""


def _unwrap(obj: Any, name: str) -> Dict[str, Any]:
    """The data of a versioned object ({"nova_object.data": {...}}), or the dict itself; never anything else."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise DroppedMessage("%s is a %s, not an object" % (name, type(obj).__name__))
    data = obj.get("nova_object.data", obj)
    if not isinstance(data, dict):
        raise DroppedMessage("%s's nova_object.data is not an object" % name)
    return data


def _str_or_none(value: Any, name: str) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise DroppedMessage("%s is a %s, not a string" % (name, type(value).__name__))


def request_from_flavor(flavor: Dict[str, Any]) -> Dict[str, Any]:
    """What a flavor's extra specs ask for, in the device profile group format (the form the pool keeper's
    function_pools_profiles reads)."""
    extra = flavor.get("extra_specs") or {}
    if not isinstance(extra, dict):
        raise DroppedMessage("flavor.extra_specs is not an object")
    groups: Dict[str, Dict[str, str]] = {}
    functions: List[str] = []
    for key in sorted(extra):
        value = extra[key]
        if not isinstance(key, str) or not isinstance(value, str):
            raise DroppedMessage("flavor.extra_specs holds a value that is not a string")
        m = _GROUPED_SPEC.match(key)
        if m:
            kind, suffix, what = m.groups()
            groups.setdefault(suffix, {})["%s:%s" % (kind, what)] = value
            f = _FUNCTION_TRAIT.match(what) if kind == "trait" else None
            if f and value == "required" and f.group(1).lower() not in functions:
                functions.append(f.group(1).lower())
    # A device profile group asks for devices: the flavor's own VCPU/MEMORY_MB/DISK_GB overrides are left out
    # (the pool keeper would read their counts as units of the function).
    plain = ("resources:VCPU", "resources:MEMORY_MB", "resources:DISK_GB")
    device_groups = [g for g in (dict((k, v) for k, v in kv[1].items() if k not in plain)
                                 for kv in sorted(groups.items(), key=lambda kv: (kv[0] != "", kv[0]))) if g]
    aliases = [a.strip() for a in extra.get("pci_passthrough:alias", "").split(",") if a.strip()]
    return {
        "groups": device_groups,
        "functions": functions,
        "device_profile": extra.get("accel:device_profile") or "",
        "pci_aliases": aliases,
        "asks_for_devices": bool(device_groups or aliases or extra.get("accel:device_profile")),
        "flavor": _str_or_none(flavor.get("name"), "flavor.name"),
    }


def parse_notification(body: bytes) -> Dict[str, Any]:
    """One AMQP message body as oslo.messaging's messagingv2 driver writes it -> the event. Raises
    DroppedMessage for anything else."""
    if len(body) > MAX_BODY:
        raise DroppedMessage("%d bytes, more than any notification" % len(body))
    try:
        envelope = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise DroppedMessage("not JSON (%s)" % exc.__class__.__name__) from None
    if not isinstance(envelope, dict):
        raise DroppedMessage("not a JSON object")
    if "oslo.message" in envelope:  # messaging 2.0 envelope: the message is a JSON string inside
        if not isinstance(envelope["oslo.message"], str):
            raise DroppedMessage("oslo.message is not a string")
        try:
            message = json.loads(envelope["oslo.message"])
        except (ValueError, RecursionError):
            raise DroppedMessage("oslo.message is not JSON") from None
    else:
        message = envelope
    if not isinstance(message, dict):
        raise DroppedMessage("the message is not a JSON object")
    event_type = message.get("event_type")
    if not isinstance(event_type, str) or not event_type:
        raise DroppedMessage("no event_type")
    payload = _unwrap(message.get("payload"), "payload")
    event: Dict[str, Any] = {
        "event_type": event_type,
        "priority": _str_or_none(message.get("priority"), "priority"),
        "publisher_id": _str_or_none(message.get("publisher_id"), "publisher_id"),
        "message_id": _str_or_none(message.get("message_id"), "message_id"),
        "timestamp": _str_or_none(message.get("timestamp"), "timestamp"),
        "instance_uuid": _str_or_none(payload.get("instance_uuid", payload.get("uuid")), "instance_uuid"),
        "host": _str_or_none(payload.get("host"), "host"),
        "state": _str_or_none(payload.get("state"), "state"),
    }
    reason = _unwrap(payload.get("reason") or payload.get("fault"), "reason")
    event["reason"] = {
        "exception": _str_or_none(reason.get("exception"), "reason.exception"),
        "message": _str_or_none(reason.get("exception_message"), "reason.exception_message"),
    }
    # compute_task.*: the flavor is in the request spec; instance.*: in the payload itself.
    spec = _unwrap(payload.get("request_spec"), "request_spec")
    flavor = _unwrap(spec.get("flavor") if spec else payload.get("flavor"), "flavor")
    event["request"] = request_from_flavor(flavor)
    event["function_key"] = ",".join(sorted(event["request"]["functions"]))
    return event


def _hosts(transport_url: str):
    """(scheme, [(user, password, host, port)], vhost) of an oslo.messaging transport URL."""
    parsed = urllib.parse.urlsplit(transport_url)
    if parsed.scheme not in ("rabbit", "amqp", "amqps"):
        raise ValueError("transport_url: the scheme must be rabbit://, amqp:// or amqps://, got %r" % parsed.scheme)
    vhost = urllib.parse.unquote(parsed.path[1:]) if len(parsed.path) > 1 else "/"
    hosts = []
    for part in parsed.netloc.split(","):
        one = urllib.parse.urlsplit("//" + part)
        try:
            port = one.port
        except ValueError:
            raise ValueError("transport_url: a host's port is not a number") from None
        hosts.append((urllib.parse.unquote(one.username or "guest"), urllib.parse.unquote(one.password or "guest"),
                      one.hostname or "", port or (5671 if parsed.scheme == "amqps" else 5672)))
    if not hosts or not hosts[0][2]:
        raise ValueError("transport_url: no host in it")
    return parsed.scheme, hosts, vhost


def _ssl_context(args: Dict[str, Any]) -> ssl_lib.SSLContext:
    ctx = ssl_lib.create_default_context(cafile=args.get("ssl_ca_file"))
    if args.get("ssl_cert_file"):
        ctx.load_cert_chain(args["ssl_cert_file"], args.get("ssl_key_file"))
    if not args.get("ssl_verify", True):
        ctx.check_hostname = False
        ctx.verify_mode = ssl_lib.CERT_NONE
    return ctx


async def _consume(connection, args: Dict[str, Any], queue: asyncio.Queue, wanted) -> None:
    """Declare, bind and read until the connection closes."""
    import aio_pika  # pylint: disable=import-outside-toplevel

    channel = await connection.channel()
    await channel.set_qos(prefetch_count=100)
    durable = bool(args.get("durable", False))
    exchange = await channel.declare_exchange(args.get("exchange", "nova"), aio_pika.ExchangeType.TOPIC,
                                              durable=durable)
    amqp_queue = await channel.declare_queue(
        args.get("queue", "accelops_eda_nova_notifications"), durable=durable,
        arguments={"x-expires": int(args.get("queue_expires", 3600)) * 1000,
                   "x-max-length": int(args.get("queue_max_length", 10000))})
    topic = args.get("topic", "versioned_notifications")
    for priority in args.get("priorities", ["error", "info"]):
        await amqp_queue.bind(exchange, routing_key="%s.%s" % (topic, priority.lower()))
    LOG.info("nova_notifications: reading %s.{%s} on exchange %s through queue %s", topic,
             ",".join(args.get("priorities", ["error", "info"])), exchange.name, amqp_queue.name)
    closed = asyncio.get_running_loop().create_future()

    def _on_close(*_):
        if not closed.done():
            closed.set_result(None)

    connection.close_callbacks.add(_on_close)
    channel.close_callbacks.add(_on_close)

    async def _on_message(message) -> None:
        async with message.process(ignore_processed=True):
            try:
                event = parse_notification(message.body)
            except DroppedMessage as exc:
                LOG.warning("nova_notifications: dropped message %s (routing key %s): %s",
                            message.message_id or "-", message.routing_key, exc)
                return
            except Exception as exc:  # pylint: disable=broad-except  # a message must never end the source
                LOG.error("nova_notifications: dropped message %s (routing key %s): unexpected %s",
                          message.message_id or "-", message.routing_key, exc.__class__.__name__)
                return
            if wanted and event["event_type"] not in wanted:
                return
            await queue.put(event)

    await amqp_queue.consume(_on_message)
    await closed


async def main(queue: asyncio.Queue, args: Dict[str, Any]) -> None:
    """ansible-rulebook's entry point: put one event per notification on ``queue``, forever."""
    import aio_pika  # pylint: disable=import-outside-toplevel

    scheme, hosts, vhost = _hosts(args["transport_url"])
    use_ssl = bool(args.get("ssl")) or scheme == "amqps"
    ssl_context = _ssl_context(args) if use_ssl else None
    wanted = set(args.get("event_types", ["compute_task.build_instances.error", "instance.delete.end"]) or [])
    max_delay = float(args.get("reconnect_max_delay", 30))
    delay, attempt = 0.5, 0
    while True:
        user, password, host, port = hosts[attempt % len(hosts)]
        attempt += 1
        try:
            connection = await aio_pika.connect(
                host=host, port=port, login=user, password=password, virtualhost=vhost,
                ssl=use_ssl, ssl_context=ssl_context, timeout=10,
                client_properties={"connection_name": "accelops.lifecycle.nova_notifications"},
                heartbeat=int(args.get("heartbeat", 30)))
        except (OSError, asyncio.TimeoutError, aio_pika.exceptions.AMQPError) as exc:
            # The message names the host, never the URL (it holds the password).
            LOG.warning("nova_notifications: cannot connect to %s:%d (%s); next try in %.1f s", host, port,
                        exc.__class__.__name__, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, max_delay)
            continue
        LOG.info("nova_notifications: connected to %s:%d", host, port)
        delay = 0.5
        try:
            await _consume(connection, args, queue, wanted)
        except (OSError, asyncio.TimeoutError, aio_pika.exceptions.AMQPError) as exc:
            LOG.warning("nova_notifications: connection to %s:%d lost (%s)", host, port, exc.__class__.__name__)
        else:
            LOG.warning("nova_notifications: connection to %s:%d closed", host, port)
        finally:
            if not connection.is_closed:
                await connection.close()
        await asyncio.sleep(delay)


if __name__ == "__main__":
    # Read notifications and print the events: python nova_notifications.py rabbit://user:pass@host:5672/
    import sys

    class _Printer(asyncio.Queue):
        async def put(self, item):
            print(json.dumps(item), flush=True)

    logging.basicConfig(level=logging.INFO)
    asyncio.run(main(_Printer(), {"transport_url": sys.argv[1]}))
