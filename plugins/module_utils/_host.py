# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host base: options and helpers shared by host-side (sysfs) modules.

Standard library only, Python 3.9+: this code is shipped to managed hosts.
"""

from __future__ import annotations

import os

from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import Sysfs

# Documented once in plugins/doc_fragments/_host.py; keep the two in step.
HOST_ARGUMENT_SPEC = dict(
    root=dict(type="path", default="/"),
)

# Where libvirt keeps running domains' status XML: the in-use evidence every host module reads
# (documented in the accelerator_info module and the _plan doc fragment).
LIBVIRT_RUN_DIR_OPTION = dict(type="str", default="/run/libvirt/qemu")


def host_argument_spec(**extra):
    """The host base's options plus the module's own extra options."""
    spec = dict((k, dict(v)) for k, v in HOST_ARGUMENT_SPEC.items())
    spec.update(extra)
    return spec


# The host path options a host module may take besides root: a relative value would be taken from the module's
# working directory on the host (a directory nobody chose), so it is refused.
HOST_PATH_OPTIONS = ("persist_root", "lock_dir", "libvirt_run_dir")


def host_sysfs(module):
    """Build the :class:`Sysfs` layer from the module's root option, failing with a message that
    names the option when the root is not a directory or a host path option is not absolute."""
    for option in HOST_PATH_OPTIONS:
        value = module.params.get(option)
        if isinstance(value, str) and value and not os.path.isabs(value):
            module.fail_json(msg="%s must be an absolute host path such as /run/accelops; got %r" % (option, value))
    root = module.params.get("root") or "/"
    if not os.path.isabs(root):
        module.fail_json(msg="root must be an absolute path to a directory (the host root, default /); got %r" % root)
    if not os.path.isdir(root):
        module.fail_json(msg="root %r is not a directory: it must be the directory under which sys/, proc/, "
                             "dev/ and run/ are read (default /)" % root)
    return Sysfs(root=root)
