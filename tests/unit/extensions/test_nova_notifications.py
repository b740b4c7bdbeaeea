# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The event source's parser and transport URL reading (the bus itself: integration target eda_nova_events)."""

from __future__ import annotations

import json

import pytest

from ansible_collections.accelops.lifecycle.extensions.eda.plugins.event_source import nova_notifications as src


def envelope(message):
    """oslo.messaging's messaging 2.0 envelope: the message as a JSON string inside."""
    return json.dumps({"oslo.version": "2.0", "oslo.message": json.dumps(message)}).encode()


def build_error(extra_specs):
    # the shape of Nova's compute_task-build_instances-error.json sample (versioned objects, nested)
    return {
        "message_id": "c6d70f0b", "publisher_id": "nova-conductor:conductor-1", "priority": "ERROR",
        "event_type": "compute_task.build_instances.error", "timestamp": "2026-11-27 04:15:59.180143",
        "_context_auth_token": "SECRET-TOKEN",
        "payload": {"nova_object.name": "ComputeTaskPayload", "nova_object.data": {
            "instance_uuid": "8e285f0e-8e32-4cb6-8f6a-f31f0cf1977e", "state": "error",
            "reason": {"nova_object.data": {"exception": "NoValidHost",
                                            "exception_message": "No valid host was found."}},
            "request_spec": {"nova_object.data": {"flavor": {"nova_object.data": {
                "name": "fpga.gzip", "extra_specs": extra_specs}}}}}}}


def test_a_failed_boot_becomes_the_event_a_rule_needs():
    event = src.parse_notification(envelope(build_error({
        "resources:VCPU": "2", "resources1:FPGA": "1", "trait1:CUSTOM_FUNCTION_GZIP": "required",
        "trait1:CUSTOM_FUNCTION_LZ4": "forbidden", "pci_passthrough:alias": "qat:1, x710-vf:2",
        "accel:device_profile": "fpga-gzip", "hw:cpu_policy": "dedicated"})))
    assert event["event_type"] == "compute_task.build_instances.error"
    assert event["instance_uuid"] == "8e285f0e-8e32-4cb6-8f6a-f31f0cf1977e"
    assert event["reason"] == {"exception": "NoValidHost", "message": "No valid host was found."}
    assert event["request"]["groups"] == [{"resources:FPGA": "1", "trait:CUSTOM_FUNCTION_GZIP": "required",
                                           "trait:CUSTOM_FUNCTION_LZ4": "forbidden"}]
    assert event["request"]["functions"] == ["gzip"]
    assert event["function_key"] == "gzip"
    assert event["request"]["pci_aliases"] == ["qat:1", "x710-vf:2"]
    assert event["request"]["device_profile"] == "fpga-gzip"
    assert "SECRET-TOKEN" not in json.dumps(event)  # the request context stays out of the event


def test_a_flavor_without_devices_asks_for_nothing():
    event = src.parse_notification(envelope(build_error({"resources:VCPU": "2"})))
    assert event["request"]["groups"] == [] and event["function_key"] == ""
    assert event["request"]["asks_for_devices"] is False


@pytest.mark.parametrize("body", [
    b"\xff not json", b"[1]", b"[" * 100000, b"x" * (2 << 20),
    json.dumps({"oslo.message": "{broken"}).encode(),
    envelope({"payload": {}}),
    envelope(dict(build_error({}), payload=["a"])),
    envelope(build_error({"trait:CUSTOM_FUNCTION_GZIP": ["required"]})),
])
def test_anything_else_is_dropped_with_a_reason(body):
    with pytest.raises(src.DroppedMessage) as caught:
        src.parse_notification(body)
    assert str(caught.value) and "SECRET" not in str(caught.value)


def test_transport_urls_as_nova_writes_them():
    assert src._hosts("rabbit://nova:p%40ss@ctl1:5673,nova:p2@[fd00::1]:5674/vh") == (
        "rabbit", [("nova", "p@ss", "ctl1", 5673), ("nova", "p2", "fd00::1", 5674)], "vh")
    assert src._hosts("amqps://ctl1/") == ("amqps", [("guest", "guest", "ctl1", 5671)], "/")
    with pytest.raises(ValueError, match="^transport_url: the scheme must be") as caught:
        src._hosts("http://nova:SECRET@ctl1/")
    assert "SECRET" not in str(caught.value)
