# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The OpenStack base: one place that turns openstack.cloud-style options into an openstacksdk connection
and SDK errors into clear module failures.

These modules run on the controller (openstacksdk is not needed on managed hosts).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
import traceback

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.accelops.lifecycle.plugins.module_utils._module import AccelopsModule

# openstacksdk and keystoneauth are imported on first use, not with this module: the filters (the fleet report,
# through _placement) and the planning code import it without talking to a service, and in every forked ansible
# worker that templates one of the collection's filters the SDK import alone cost about 0.15 s of CPU.
HAS_SDK = True  # False: openstacksdk could not be imported (SDK_IMPORT_ERROR says why)
SDK_IMPORT_ERROR = None
_LAZY = {}


def _sdk_exceptions():
    """openstack.exceptions, or None when openstacksdk cannot be imported (then HAS_SDK is False)."""
    if "sdk" not in _LAZY:
        global HAS_SDK, SDK_IMPORT_ERROR  # pylint: disable=global-statement
        try:
            import openstack  # pylint: disable=import-outside-toplevel
            from openstack import exceptions as sdk_exceptions  # pylint: disable=import-outside-toplevel
            _LAZY["sdk"] = (openstack, sdk_exceptions)
        except ImportError:
            HAS_SDK = False
            SDK_IMPORT_ERROR = traceback.format_exc()
            _LAZY["sdk"] = None
    return _LAZY["sdk"][1] if _LAZY["sdk"] else None


def _no_answer_errors():
    """(keystoneauth's errors that mean no answer came back, those of them that are not transient)."""
    if "ksa" not in _LAZY:
        try:
            from keystoneauth1 import exceptions as ksa_exc  # pylint: disable=import-outside-toplevel
            _LAZY["ksa"] = ((ksa_exc.ConnectFailure, ksa_exc.ConnectTimeout, ksa_exc.UnknownConnectionError,
                             ksa_exc.DiscoveryFailure), (ksa_exc.SSLError,))
        except ImportError:  # pragma: no cover
            _LAZY["ksa"] = ((), ())
    return _LAZY["ksa"]


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

# The accepted range of the numeric options (request_retries and request_retry_delay where the module has
# them) and the str options that hold paths, checked by AccelopsModule with a message naming the option.
OPENSTACK_RANGES = {
    "api_timeout": (1, 3600, "seconds"),
    "timeout": (0, 86400, "seconds"),
    "request_retries": (0, 20),
    "request_retry_delay": (0, 60, "seconds"),
}
OPENSTACK_PATHS = ("ca_cert", "client_cert", "client_key")

# Options that describe the connection when no cloud dict is given.
_CONNECTION_OPTIONS = ("auth", "auth_type", "region_name", "validate_certs", "ca_cert", "client_cert", "client_key",
                       "api_timeout")


def openstack_argument_spec(**extra):
    """The OpenStack base's options plus the module's own extra options."""
    spec = dict((k, dict(v)) for k, v in OPENSTACK_ARGUMENT_SPEC.items())
    spec.update(extra)
    return spec


# A region id as Keystone lists them; braces (openstacksdk formats strings with the region) and control
# characters are refused here, naming the option, instead of an IndexError deep in the SDK.
REGION_RE = re.compile(r"^[^{}\x00-\x1f\x7f]{1,255}\Z")


def connection_refusal(error, params):
    """The message for an error building the connection, naming the option it comes from (keystoneauth and
    openstacksdk say it in their words, without the option's name)."""
    name = type(error).__name__
    text = " ".join(("%s" % error).split())[:300]
    cloud = params.get("cloud")
    if name == "NoMatchingPlugin":
        option = "auth_type"
    elif "Config" in name and isinstance(cloud, str) and cloud in text:
        option = "cloud"
    elif isinstance(cloud, dict):
        option = "cloud"
    elif isinstance(error, (TypeError, KeyError, IndexError)) or "auth" in text.lower():
        option = "auth"
    else:
        option = "cloud, auth, auth_type, region_name"
    return "%s: could not build an OpenStack connection from it: %s: %s" % (option, name, text)


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
    region = kwargs.get("region_name")
    if region is not None and (not isinstance(region, str) or not REGION_RE.match(region)):
        raise ValueError("region_name: %r is not a region name (the region id as Keystone lists it, 1-255 "
                         "characters without braces or control characters, e.g. RegionOne)"
                         % (region[:80] if isinstance(region, str) else type(region).__name__,))
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


# -- bounded retries and clear failures for service clients (Placement, Cyborg, Ironic) ----------------------
# A request that got no answer (connection refused or dropped, timed out, version discovery failed) or an HTTP
# 5xx is repeated up to REQUEST_RETRIES times, pauses starting at REQUEST_RETRY_DELAY and doubling (at most
# RETRY_DELAY_CAP each): 0.5 + 1 + 2 + 4 = 7.5 s of waiting by default.
REQUEST_RETRIES = 4
REQUEST_RETRY_DELAY = 0.5
RETRY_DELAY_CAP = 8.0
TRANSIENT_STATUS = (500, 502, 503, 504)
# A request with no answer for this long is given up (and retried) when the connection sets no api_timeout.
REQUEST_TIMEOUT = 60.0
# The module options that set the retries, for argument_spec (documented in each module).
RETRY_ARGUMENT_SPEC = dict(
    request_retries=dict(type="int", default=REQUEST_RETRIES),
    request_retry_delay=dict(type="float", default=REQUEST_RETRY_DELAY),
)


def check_retry_options(retries, delay):
    """request_retries and request_retry_delay: bounded, so a run always ends. ValueError naming the option."""
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 20:
        raise ValueError("request_retries: must be a whole number between 0 and 20, got %r" % (retries,))
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= 60:  # NaN is refused
        raise ValueError("request_retry_delay: must be a number of seconds between 0 and 60, got %r" % (delay,))


def retry_delays(retries, delay):
    """The pauses between attempts: ``delay`` doubled each time, at most RETRY_DELAY_CAP each."""
    return [min(delay * (2 ** i), RETRY_DELAY_CAP) for i in range(max(retries, 0))]


class DeadlineExceeded(BaseException):
    """A request path (authentication, version discovery, the request) ran past its deadline. A BaseException:
    keystoneauth's own ``except Exception`` around discovery must not swallow it and try again."""


# The deadline of one request path when the module sets none: api_timeout (OpenStackModule sets it from the
# options), else REQUEST_TIMEOUT.
_DEADLINE = {"seconds": None}


# A request path makes up to this many requests, each bounded by api_timeout on its own (a token, the service's
# version discovery, the request); the margin is for the work between them on a loaded machine.
PATH_REQUESTS = 4
PATH_MARGIN = 5.0


def path_deadline(timeout):
    """The deadline of one request path whose requests are each bounded by ``timeout`` seconds."""
    return PATH_REQUESTS * timeout + PATH_MARGIN


def request_deadline():
    """Seconds one request path may take: from the module's api_timeout, else from REQUEST_TIMEOUT."""
    return path_deadline(_DEADLINE["seconds"] or REQUEST_TIMEOUT)


@contextlib.contextmanager
def deadline(seconds, what):
    """Bound what runs inside by ``seconds`` of wall time, whatever keystoneauth does in there (a 401 on auth_url
    sent it through discovery again and again, past api_timeout): SIGALRM raises :class:`DeadlineExceeded`.
    Modules run in their process's main thread; elsewhere, or inside an outer deadline, nothing is added.
    A deadline that falls inside an import (the SDK imports lazily, on its first request) waits for the import to
    end: an exception raised in the middle of a module's body would leave it half-initialised for the rest of the
    run (its submodules already in sys.modules)."""
    if not seconds or threading.current_thread() is not threading.main_thread() \
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def expire(_signum, frame):
        while frame is not None:
            if frame.f_globals.get("__name__") in ("importlib._bootstrap", "importlib._bootstrap_external"):
                signal.setitimer(signal.ITIMER_REAL, 0.05)  # look again once the import has ended
                return
            frame = frame.f_back
        raise DeadlineExceeded("%s: no answer within %s s (%d x api_timeout + %s s)"
                               % (what, seconds, PATH_REQUESTS, PATH_MARGIN))
    old = signal.signal(signal.SIGALRM, expire)
    try:
        signal.setitimer(signal.ITIMER_REAL, float(seconds))
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _api_timeout(params):
    """api_timeout as a number of seconds (the option, or the key of a cloud dict), None when not set or not a
    positive number."""
    value = params.get("api_timeout")
    cloud = params.get("cloud")
    if value is None and isinstance(cloud, dict):
        value = cloud.get("api_timeout")
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return value if 0 < value <= 86400 else None


def no_answer_cause(error):
    """A one-line cause when ``error`` means that no answer came back (else None)."""
    if isinstance(error, DeadlineExceeded):
        return "no answer: %s" % error
    no_answer, not_transient = _no_answer_errors()
    if no_answer and isinstance(error, no_answer) and not isinstance(error, not_transient):
        text = " ".join(str(error).split())
        return "no answer: %s: %s" % (type(error).__name__, text[:300])
    return None


class ServiceUnavailable(Exception):
    """A service gave no answer (or kept answering 5xx) to a request, after the bounded retries. The message
    names the service, the operation, the request, the cause, the attempts and what to do."""

    def __init__(self, service, operation, method, path, cause, attempts, waited):
        self.service, self.operation, self.method, self.path = service, operation, method, path
        self.cause, self.attempts, self.waited = cause, attempts, waited
        Exception.__init__(self, "%s: %s failed: %s %s: %s (%d attempt%s, %.1f s of retries); check that %s is "
                                 "running and reachable (request_retries and request_retry_delay wait longer), "
                                 "then run again: the run is safe to repeat"
                           % (service, operation, method, path, cause, attempts, "" if attempts == 1 else "s",
                              waited, service))


def permission_hint(service, status, role="admin"):
    """What an HTTP 401 or 403 from ``service`` means and what to do (empty for other statuses)."""
    if status == 401:
        return ("authentication failed (HTTP 401): %s did not accept the credentials; check auth (token, "
                "password, application credential) and auth_type" % service)
    if status == 403:
        return ("permission denied (HTTP 403): the identity in use lacks the role %s requires for this; use "
                "credentials with the %s role" % (service, role))
    return ""


def service_proxy(get, service, retries=REQUEST_RETRIES, delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
    """``get()`` (e.g. ``lambda: conn.accelerator``: building an SDK proxy runs the service's version discovery,
    ``GET /``), repeated like a request when no answer came back; :class:`ServiceUnavailable` after the bounded
    retries. Other errors are raised as they are."""
    pauses = retry_delays(retries, delay)
    waited = 0.0
    for attempt in range(len(pauses) + 1):
        try:
            with deadline(request_deadline(), "%s version discovery" % service):
                return get()
        except (Exception, DeadlineExceeded) as e:  # pylint: disable=broad-except
            cause = no_answer_cause(e)
            if cause is None:
                raise
            if attempt == len(pauses):
                raise ServiceUnavailable(service, "version discovery", "GET", "/", cause, attempt + 1, waited)
            sleep(pauses[attempt])
            waited += pauses[attempt]
    raise AssertionError("unreachable")


class ServiceClient(object):
    """Requests to one service over an openstacksdk proxy (a keystoneauth adapter), counted, with bounded
    retries of what is safe to repeat. Subclasses set ``service`` and ``microversion``.

    :meth:`send` returns ``(status, response)`` of the first answer that is not a 5xx. A request that got no
    answer or a 5xx is repeated (when ``retry``); after the last attempt it raises :class:`ServiceUnavailable`.
    """

    service = "OpenStack"
    microversion = None

    def __init__(self, adapter, retries=REQUEST_RETRIES, retry_delay=REQUEST_RETRY_DELAY, sleep=time.sleep):
        self.adapter = adapter
        self.pauses = retry_delays(retries, retry_delay)
        self.sleep = sleep
        self.requests = 0
        self.retried = 0
        self.log = []
        session = getattr(adapter, "session", None)
        # the session's timeout is api_timeout (per socket read); without one, REQUEST_TIMEOUT per request
        self.timeout = None if getattr(session, "timeout", None) else REQUEST_TIMEOUT
        self.deadline = path_deadline(session.timeout) if getattr(session, "timeout", None) else request_deadline()

    def count(self, method):
        """Count one request (subclasses may count reads and writes apart)."""
        self.requests += 1

    def fault(self, resp):
        """The service's error message in ``resp`` (subclasses decode their error bodies)."""
        return " ".join((getattr(resp, "text", "") or "").split())[:300] or "no details"

    def send_once(self, method, path, body=None, extra=None):
        """One attempt: ``(status, response)``, or ``(None, cause)`` when no answer came back."""
        self.count(method)
        kwargs = {"raise_exc": False, "connect_retries": 0, "headers": {"Accept": "application/json"}}
        if self.microversion:
            kwargs["microversion"] = self.microversion
        if self.timeout:
            kwargs["timeout"] = self.timeout
        if body is not None:
            kwargs["json"] = body
        kwargs.update(extra or {})
        try:
            # one deadline for the whole path (authentication, discovery, the request): api_timeout bounds it
            with deadline(self.deadline, "%s %s %s" % (self.service, method, path)):
                resp = self.adapter.request(path, method, **kwargs)
        except (Exception, DeadlineExceeded) as e:  # pylint: disable=broad-except
            cause = no_answer_cause(e)
            if cause is None:
                raise
            self.log.append("%s %s no-answer" % (method, path))
            return None, cause
        self.log.append("%s %s %s" % (method, path, resp.status_code))
        return resp.status_code, resp

    def is_transient(self, status, resp):
        """Whether an answer means "try again" (default: any of TRANSIENT_STATUS)."""
        return status in TRANSIENT_STATUS

    def http_error(self, method, path, status, resp, operation):
        """The error for an answer the request does not accept (subclasses return their service's type)."""
        return RuntimeError("%s answered HTTP %s to %s %s: %s" % (self.service, status, method, path, self.fault(resp)))

    def result(self, method, path, status, resp, ok=(200,), operation=None):
        """The parsed JSON body of an answer in ``ok`` (None when empty or not JSON); :meth:`http_error` else."""
        if status not in ok:
            raise self.http_error(method, path, status, resp, operation)
        if status == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    def unavailable(self, operation, method, path, status, resp, attempts, waited):
        cause = resp if status is None else "HTTP %s: %s" % (status, self.fault(resp))
        return ServiceUnavailable(self.service, operation, method, path, cause, attempts, waited)

    def send(self, method, path, body=None, operation=None, retry=True, extra=None):
        """One request with bounded retries (``retry``: only for requests that are safe to repeat)."""
        pauses = self.pauses if retry else []
        waited = 0.0
        operation = operation or "%s %s" % (method, path)
        for attempt in range(len(pauses) + 1):
            status, resp = self.send_once(method, path, body, extra)
            if status is not None and not self.is_transient(status, resp):
                return status, resp
            if attempt == len(pauses):
                raise self.unavailable(operation, method, path, status, resp, attempt + 1, waited)
            self.retried += 1
            self.sleep(pauses[attempt])
            waited += pauses[attempt]
        raise AssertionError("unreachable")


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


class _AnsibleModule(AccelopsModule):
    """AnsibleModule whose ``no_log_values`` also hold the secrets inside a ``cloud`` dict (a raw option, so
    ansible-core cannot know which of its values are secret) before anything is logged (the invocation line
    too), so they reach neither the system log nor the result."""

    def log(self, msg, log_args=None):
        self.no_log_values.update(cloud_secrets(self.params.get("cloud")))
        super(_AnsibleModule, self).log(msg, log_args=log_args)


class OpenStackModule(object):
    """Base for modules that talk to OpenStack APIs.

    Subclasses set ``argument_spec`` (their own options), the AnsibleModule keyword arguments in
    ``module_kwargs``, and implement :meth:`run` using :attr:`conn`. Errors from the SDK end the module
    with ``fail_json`` and a readable message, never a traceback.
    """

    argument_spec = {}
    module_kwargs = {}

    def __init__(self):
        kwargs = dict(self.module_kwargs)
        kwargs["ranges"] = dict(OPENSTACK_RANGES, **kwargs.get("ranges", {}))
        kwargs["paths"] = OPENSTACK_PATHS + tuple(kwargs.get("paths", ()))
        self.ansible = _AnsibleModule(argument_spec=openstack_argument_spec(**self.argument_spec), **kwargs)
        for option in OPENSTACK_PATHS:
            # requests opens these only when it sends, and raises a bare OSError there
            path = self.ansible.params.get(option)
            if path is not None and not (os.path.isfile(path) and os.access(path, os.R_OK)):
                self.ansible.fail_json(msg="%s: must be the path of a readable PEM file where the module runs; %s"
                                           % (option, "there is none at %r" % path if option != "client_key"
                                              else "there is none at the path given"))
        # also when the invocation is not logged (module-level no_log): results are masked with the same values
        self.ansible.no_log_values.update(cloud_secrets(self.ansible.params.get("cloud")))
        self.params = self.ansible.params
        self._conn = None
        _DEADLINE["seconds"] = _api_timeout(self.params)

    @property
    def conn(self):
        if self._conn is None:
            sdk_exceptions = _sdk_exceptions() if HAS_SDK else None
            if sdk_exceptions is None:
                self.ansible.fail_json(msg=missing_required_lib("openstacksdk"), exception=SDK_IMPORT_ERROR)
            try:
                kwargs = connection_kwargs(self.params)
            except ValueError as e:
                self.ansible.fail_json(msg=str(e))
            try:
                self._conn = _LAZY["sdk"][0].connect(**kwargs)
            except Exception as e:  # pylint: disable=broad-except  # keystoneauth and openstacksdk's own types
                self.ansible.fail_json(msg=connection_refusal(e, self.params))
        return self._conn

    def fail_sdk(self, error, action):
        self.ansible.fail_json(msg="%s: %s" % (action, sdk_error_message(error)))

    def run(self):
        raise NotImplementedError

    def __call__(self):
        """Run the module; SDK errors anywhere in :meth:`run` become a failure message."""
        try:
            self.run()
        except ServiceUnavailable as e:
            self.ansible.fail_json(msg=str(e))
        except Exception as e:  # pylint: disable=broad-except
            sdk_exceptions = _sdk_exceptions() if HAS_SDK else None
            if sdk_exceptions is not None and isinstance(e, sdk_exceptions.SDKException):
                self.fail_sdk(e, "OpenStack request failed")
            if type(e).__module__.startswith("keystoneauth1"):
                self.ansible.fail_json(msg="OpenStack authentication or connection failed: %s: %s"
                                           % (type(e).__name__, e))
            if isinstance(e, OSError):   # requests: a TLS file that went away or cannot be read
                self.ansible.fail_json(msg="OpenStack connection failed: %s: %s" % (type(e).__name__, e))
            raise
