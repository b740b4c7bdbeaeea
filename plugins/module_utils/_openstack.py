# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The OpenStack base: one place that turns openstack.cloud-style options into an openstacksdk connection
and SDK errors into clear module failures.

These modules run on the controller (openstacksdk is not needed on managed hosts).
"""

from __future__ import annotations

import re
import traceback

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

try:
    import openstack
    from openstack import exceptions as sdk_exceptions
    HAS_SDK = True
    SDK_IMPORT_ERROR = None
except ImportError:
    HAS_SDK = False
    SDK_IMPORT_ERROR = traceback.format_exc()

# The option names and aliases are openstack.cloud's, so module_defaults written for that collection work
# here too. Documented once in plugins/doc_fragments/_openstack.py; keep the two in step.
OPENSTACK_ARGUMENT_SPEC = dict(
    cloud=dict(type="raw"),
    auth=dict(type="dict", no_log=True),
    auth_type=dict(type="str"),
    region_name=dict(type="str"),
    validate_certs=dict(type="bool", aliases=["verify"]),
    ca_cert=dict(type="str", aliases=["cacert"]),
    client_cert=dict(type="str", aliases=["cert"]),
    client_key=dict(type="str", no_log=True, aliases=["key"]),
    api_timeout=dict(type="int"),
    interface=dict(type="str", default="public", choices=["admin", "internal", "public"], aliases=["endpoint_type"]),
    wait=dict(type="bool", default=True),
    timeout=dict(type="int", default=180),
)

# Options that describe the connection when no cloud dict is given.
_CONNECTION_OPTIONS = ("auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
                       "api_timeout")


def openstack_argument_spec(**extra):
    """The OpenStack base's options plus the module's own extra options."""
    spec = dict((k, dict(v)) for k, v in OPENSTACK_ARGUMENT_SPEC.items())
    spec.update(extra)
    return spec


def connection_kwargs(params):
    """Keyword arguments for :func:`openstack.connect` from module parameters.

    Raises ValueError with an operator-readable message when the options contradict each other.
    """
    cloud = params.get("cloud")
    if cloud is not None and not isinstance(cloud, (str, dict)):
        raise ValueError("cloud must be the name of a cloud in clouds.yaml (a string) or a dict of cloud settings; "
                         "got %s" % type(cloud).__name__)
    if isinstance(cloud, dict):
        clashing = sorted(k for k in _CONNECTION_OPTIONS if params.get(k) is not None)
        if clashing:
            raise ValueError("cloud is a dict of cloud settings, so it must carry the connection settings itself; "
                             "remove %s or put them inside cloud" % ", ".join(clashing))
        kwargs = dict(cloud)
    else:
        kwargs = {}
        if cloud:
            kwargs["cloud"] = cloud
        for option, key in (("auth", "auth"), ("auth_type", "auth_type"), ("region_name", "region_name"),
                            ("validate_certs", "verify"), ("ca_cert", "cacert"), ("client_cert", "cert"),
                            ("client_key", "key"), ("api_timeout", "api_timeout")):
            if params.get(option) is not None:
                kwargs[key] = params[option]
    kwargs.setdefault("interface", params.get("interface") or "public")
    kwargs.setdefault("app_name", "accelops.lifecycle")
    return kwargs


def sdk_error_message(error):
    """A one-line message for an openstacksdk (or keystoneauth) error, with the HTTP status and the
    request id when the service sent them."""
    parts = [type(error).__name__]
    status = getattr(error, "status_code", None)
    if status:
        parts.append("HTTP %s" % status)
    text = getattr(error, "details", None) or getattr(error, "message", None) or str(error)
    msg = "%s: %s" % (" ".join(parts), str(text).strip() or "no details")
    request_id = getattr(error, "request_id", None)
    if request_id:
        msg += " (request id %s)" % request_id
    return msg


SECRET_KEY_RE = re.compile(r"(password|secret|token|passphrase|private_key|key_?pass)", re.I)


def cloud_secrets(value, key=""):
    """Every string under a secret-looking key of a ``cloud`` dict (``auth.password``, ``auth.token``,
    ``application_credential_secret``...), at any depth."""
    found = set()
    if isinstance(value, dict):
        for k, v in value.items():
            found |= cloud_secrets(v, str(k))
    elif isinstance(value, (list, tuple)):
        for v in value:
            found |= cloud_secrets(v, key)
    elif isinstance(value, str) and value and SECRET_KEY_RE.search(key):
        found.add(value)
    return found


class _AnsibleModule(AnsibleModule):
    """AnsibleModule whose ``no_log_values`` also hold the secrets inside a ``cloud`` dict (a raw option, so
    ansible-core cannot know which of its values are secret) before the invocation is logged, so they reach
    neither the system log nor the result."""

    def _log_invocation(self):
        self.no_log_values.update(cloud_secrets(self.params.get("cloud")))
        super(_AnsibleModule, self)._log_invocation()


class OpenStackModule(object):
    """Base for modules that talk to OpenStack APIs.

    Subclasses set ``argument_spec`` (their own options), the AnsibleModule keyword arguments in
    ``module_kwargs``, and implement :meth:`run` using :attr:`conn`. Errors from the SDK end the module
    with ``fail_json`` and a readable message, never a traceback.
    """

    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        self.ansible = _AnsibleModule(argument_spec=openstack_argument_spec(**self.argument_spec), **self.module_kwargs)
        # also when the invocation is not logged (module-level no_log): results are masked with the same values
        self.ansible.no_log_values.update(cloud_secrets(self.ansible.params.get("cloud")))
        self.params = self.ansible.params
        self._conn = None

    @property
    def conn(self):
        if self._conn is None:
            if not HAS_SDK:
                self.ansible.fail_json(msg=missing_required_lib("openstacksdk"), exception=SDK_IMPORT_ERROR)
            try:
                kwargs = connection_kwargs(self.params)
            except ValueError as e:
                self.ansible.fail_json(msg=str(e))
            try:
                self._conn = openstack.connect(**kwargs)
            except sdk_exceptions.SDKException as e:
                self.fail_sdk(e, "could not build an OpenStack connection")
            except Exception as e:  # keystoneauth and os-client-config raise their own types
                self.ansible.fail_json(msg="could not build an OpenStack connection: %s: %s" % (type(e).__name__, e))
        return self._conn

    def fail_sdk(self, error, action):
        self.ansible.fail_json(msg="%s: %s" % (action, sdk_error_message(error)))

    def run(self):
        raise NotImplementedError

    def __call__(self):
        """Run the module; SDK errors anywhere in :meth:`run` become a failure message."""
        try:
            self.run()
        except Exception as e:  # pylint: disable=broad-except
            if HAS_SDK and isinstance(e, sdk_exceptions.SDKException):
                self.fail_sdk(e, "OpenStack request failed")
            if type(e).__module__.startswith("keystoneauth1"):
                self.ansible.fail_json(msg="OpenStack authentication or connection failed: %s: %s"
                                           % (type(e).__name__, e))
            raise
