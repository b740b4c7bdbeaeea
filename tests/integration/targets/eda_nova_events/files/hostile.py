# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Publish messages that are not Nova's notifications where Nova's go (exchange nova, versioned_notifications.error).

Run with the Python of .venv-eda (aio-pika): hostile.py TRANSPORT_URL. Prints how many it sent.
"""

import asyncio
import json
import sys

import aio_pika

NOTIFICATION = {"event_type": "compute_task.build_instances.error", "priority": "ERROR", "message_id": "m",
                "payload": {"nova_object.data": {"instance_uuid": "x", "reason": {}}}}
BODIES = [
    b"\xff\xfe not json",
    b"[1, 2, 3]",
    json.dumps({"oslo.version": "2.0", "oslo.message": "{broken"}).encode(),
    json.dumps({"oslo.version": "2.0", "oslo.message": 42}).encode(),
    json.dumps({"oslo.version": "2.0", "oslo.message": json.dumps({"payload": {}})}).encode(),
    json.dumps(dict(NOTIFICATION, payload=["not", "an", "object"])).encode(),
    json.dumps(dict(NOTIFICATION, payload={"nova_object.data": {"instance_uuid": {"$ne": 1}}})).encode(),
    json.dumps(dict(NOTIFICATION, payload={"nova_object.data": {
        "instance_uuid": "x", "request_spec": {"nova_object.data": {"flavor": {"nova_object.data": {
            "extra_specs": {"trait:CUSTOM_FUNCTION_GZIP": ["required"]}}}}}}})).encode(),
    b"[" * 100000,
    b"x" * (2 << 20),
]


async def main(url):
    connection = await aio_pika.connect(url.replace("rabbit://", "amqp://", 1))
    async with connection:
        channel = await connection.channel()
        exchange = await channel.declare_exchange("nova", aio_pika.ExchangeType.TOPIC)
        for i, body in enumerate(BODIES):
            await exchange.publish(aio_pika.Message(body=body, message_id="hostile-%d" % i),
                                   routing_key="versioned_notifications.error")
    print(len(BODIES))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
