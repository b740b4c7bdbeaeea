# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Send Nova's notification of a boot that found no host, with Nova's own code, as nova-conductor does.

Run with the Python of .venv-nova: nova_send.py TRANSPORT_URL FUNCTION:COUNT [...]  (FUNCTION empty: a flavor that
asks for no function). For each, COUNT instances are built from a flavor asking for one FPGA with
trait:CUSTOM_FUNCTION_<FUNCTION>=required; the scheduler's NoValidHost is raised and caught, and
nova.compute.utils.notify_about_compute_task_error sends compute_task.build_instances.error (ComputeTaskPayload)
through nova.rpc's versioned notifier (oslo.messaging, messagingv2, rabbit transport) - nova-conductor's path in
nova.scheduler.utils.set_vm_state_and_notify. Prints the instance uuids, one a line, and on stderr when each was sent
(time.time() just before the notifier is called).
"""

import os
import sys
import tempfile
import time
import uuid
import warnings

warnings.simplefilter("ignore")

from nova import config, context, exception, objects  # noqa: E402
from nova.compute import utils as compute_utils  # noqa: E402


def main(url, specs):
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as conf:
        conf.write("[DEFAULT]\nhost = conductor-1\ntransport_url = %s\n"
                   "[oslo_messaging_notifications]\ndriver = messagingv2\n"
                   "[notifications]\nnotification_format = versioned\n" % url)
    try:
        # nova-conductor's start: options, control_exchange "nova", nova.rpc's notifiers
        config.parse_args(["nova-conductor"], default_config_files=[conf.name], configure_db=False)
    finally:
        os.unlink(conf.name)
    objects.register_all()
    ctx = context.get_admin_context()
    for spec_arg in specs:
        function, count = (spec_arg.split(":", 1) + ["1"])[:2]
        extra = {"resources:FPGA": "1"}
        if function:
            extra["trait:CUSTOM_FUNCTION_%s" % function.upper()] = "required"
        flavor = objects.Flavor(name="fpga.%s" % (function or "any"), flavorid="fpga-%s" % function, memory_mb=512,
                                vcpus=1, root_gb=1, ephemeral_gb=0, swap=0, rxtx_factor=1.0, vcpu_weight=0,
                                disabled=False, is_public=True, description=None, extra_specs=extra)
        for _index in range(int(count or 1)):
            instance_uuid = str(uuid.uuid4())
            request_spec = objects.RequestSpec.from_components(
                ctx, instance_uuid, objects.ImageMeta.from_dict({"properties": {}}), flavor, None, None, {}, None,
                None, project_id="6f70656e737461636b00000000000001", user_id="6f70656e737461636b00000000000002")
            sent_at = time.time()
            try:
                raise exception.NoValidHost(reason="There are not enough hosts available.")
            except exception.NoValidHost as exc:
                compute_utils.notify_about_compute_task_error(ctx, "build_instances", instance_uuid, request_spec,
                                                              "error", exc)
            print(instance_uuid)
            print("sent %s at %.6f" % (instance_uuid, sent_at), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
