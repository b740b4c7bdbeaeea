# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations


class ModuleDocFragment(object):
    # Options of every OpenStack-facing module (see plugins/module_utils/_openstack.py).
    # The names and aliases are openstack.cloud's, so module_defaults written for it apply here too.
    DOCUMENTATION = r'''
options:
  cloud:
    description:
      - Name of a cloud in C(clouds.yaml), or a dict of cloud settings (as a C(clouds.yaml) entry would hold).
      - When it is a dict, the connection settings (O(auth), O(auth_type), O(region_name), TLS options,
        O(api_timeout)) must be inside it rather than given as options.
    type: raw
  auth:
    description:
      - Authentication settings for the chosen O(auth_type), for example C(auth_url), C(username),
        C(password), C(project_name), or C(endpoint) and C(token) for C(admin_token).
      - Not needed when O(cloud) names a cloud that carries them, or when C(OS_*) environment variables do.
    type: dict
  auth_type:
    description:
      - The keystoneauth plugin to authenticate with, for example C(password), C(v3applicationcredential)
        or C(admin_token).
    type: str
  region_name:
    description:
      - Region whose endpoints are used.
    type: str
  validate_certs:
    description:
      - Whether to verify TLS certificates of the endpoints. Defaults to the cloud's setting, or C(true).
    type: bool
    aliases: [verify]
  ca_cert:
    description:
      - Path to a CA bundle used to verify the endpoints' certificates.
    type: str
    aliases: [cacert]
  client_cert:
    description:
      - Path to a client certificate (PEM) for mutual TLS.
    type: str
    aliases: [cert]
  client_key:
    description:
      - Path to the key of O(client_cert).
    type: str
    aliases: [key]
  api_timeout:
    description:
      - Seconds to wait for one API request before giving up, from 1 to 3600.
    type: int
  interface:
    description:
      - Which endpoint of the service catalog to use.
    type: str
    default: public
    choices: [admin, internal, public]
    aliases: [endpoint_type]
  wait:
    description:
      - Whether to wait for asynchronous operations to finish before returning.
    type: bool
    default: true
  timeout:
    description:
      - Seconds to wait when O(wait=true), from 0 to 86400.
    type: int
    default: 180
requirements:
  - python >= 3.11
  - openstacksdk >= 1.0.0
notes:
  - These modules run on the controller (or wherever C(delegate_to) points); managed hosts do not need openstacksdk.
  - Set the options once for all of them with C(module_defaults) and the C(group/accelops.lifecycle.openstack) action group.
'''
