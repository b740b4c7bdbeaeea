# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Nova (and Cyborg) configuration for the declared devices of one host.

The declaration (``accelerator_host_functions``) is resolved against the host's discovery record with
``_declaration.resolve``; each assigned card then becomes the Nova options that offer it to guests, as its kind
says (``nova_spec`` of the kind in its family's file: which devices, their ids, the defaults) and rendered here:

- **vGPU on an mdev GPU** (the card, or its VFs, offer ``mdev_supported_types``): ``[devices]
  enabled_mdev_types`` and one ``[mdev_<type id>]`` section with ``device_addresses`` and ``mdev_class``
  (``VGPU`` unless the function declares a ``CUSTOM_*`` resource class); ``max_instances`` only where the mdev
  parents are VFs (SR-IOV GPUs), as Nova documents it.
- **vGPU on an NVIDIA vendor-specific VFIO GPU** (SR-IOV, no mdev): the vGPUs are VFs that Nova assigns as PCI
  devices: one ``[pci] device_spec`` per VF that carries (or will carry) the type, ``managed: no``, a resource
  class per function (``CUSTOM_VGPU_<NAME>`` unless declared) and the function trait; an alias of type-VF.
- **VFs** (``vfs``): one ``device_spec`` per PF with the PF's address and the VF product id (Nova matches the VFs
  of a PF by their parent address), the function trait, and an alias of type-VF. With a physical network
  (Neutron SR-IOV ports) the spec carries ``physical_network`` and no alias, resource class or traits.
- **Whole devices** (``passthrough``, and ``fpga`` when not left to Cyborg): one ``device_spec`` per card with
  its address and ids; an alias of type-PF for SR-IOV capable cards (Nova requires it to hand over a PF whole),
  else type-PCI. A card whose function sits on its VFs (the family's ``function_carriers``: an Intel FPGA whose
  port was given to its VF) gets one ``device_spec`` per such VF, with the VF's ids, and a type-VF alias.
- **One-time-use devices** (the ``one_time_use`` option names functions): their ``device_spec`` gets Nova's
  ``one_time_use`` tag (Nova 34: after an instance had the device, Nova leaves its provider reserved until someone
  else resets and releases it: the ``placement_one_time_use`` and ``one_time_use_reset`` modules). Nova takes it
  only on whole devices (type-PCI, type-PF) and only with ``[pci] report_in_placement``.
- **Cyborg**: functions of the families given in ``cyborg_families`` are left to Cyborg; their drivers go to
  cyborg.conf ``[agent] enabled_drivers``.

Everything is deterministic (sorted, JSON with sorted keys), so rendering twice gives the same bytes.
Standard library only; controller side (the ``nova_device_config`` filter): it reads the Placement code's
function traits (``_placement.family_specs``) so that Nova's providers carry the same ones.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.accelops.lifecycle.plugins.module_utils import _cardstate, _declaration
from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import cyborg_families, for_record, kind
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.family_specs import _device_specs
from ansible_collections.accelops.lifecycle.plugins.module_utils._placement.model import is_function_trait
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import reporter_provider_name

MARKER = "# accelops.lifecycle nova_compute_config: rendered from accelerator_host_functions"
MDEV_CLASS_RE = re.compile(r"^(VGPU|CUSTOM_[A-Z0-9_]+)$")
DEVICE_SPEC_KEYS = ("vendor_id", "product_id", "address", "physical_network", "trusted", "remote_managed",
                    "resource_class", "traits", "managed", "live_migratable", "one_time_use")
ALIAS_KEYS = ("name", "vendor_id", "product_id", "device_type", "numa_policy", "resource_class", "traits",
              "live_migratable")
# the families Cyborg has a driver for (the families' cyborg_driver_name)
CYBORG_FAMILIES = cyborg_families()


class NovaConfigError(ValueError):
    """Options that cannot be used; the message names the option and the accepted form."""


def _options(options):
    opts = dict(options or {})
    out = {
        "report_in_placement": opts.pop("report_in_placement", True),
        "cyborg_families": opts.pop("cyborg_families", None) or [],
        "physical_networks": opts.pop("physical_networks", None) or {},
        "one_time_use": opts.pop("one_time_use", None) or [],
        "host": opts.pop("host", None),
    }
    if opts:
        raise NovaConfigError("unknown option(s) %s; accepted: report_in_placement, cyborg_families, "
                              "physical_networks, one_time_use, host" % ", ".join(sorted(str(k) for k in opts)))
    if not isinstance(out["report_in_placement"], bool):
        raise NovaConfigError("report_in_placement: must be true or false, got %r" % (out["report_in_placement"],))
    fams = out["cyborg_families"]
    if isinstance(fams, str):
        fams = [fams]
    if not isinstance(fams, list) or any(f not in CYBORG_FAMILIES for f in fams):
        raise NovaConfigError("cyborg_families: a list of families Cyborg has drivers for (%s), got %r"
                              % (", ".join(CYBORG_FAMILIES), out["cyborg_families"]))
    out["cyborg_families"] = sorted(set(fams))
    nets = out["physical_networks"]
    if not isinstance(nets, dict) or not all(isinstance(k, str) and isinstance(v, str) and v for k, v in nets.items()):
        raise NovaConfigError("physical_networks: a mapping of function name to physical network name, got %r"
                              % (nets,))
    otu = out["one_time_use"]
    if not isinstance(otu, list) or not all(isinstance(x, str) and x for x in otu):
        raise NovaConfigError("one_time_use: a list of declared function names, got %r" % (otu,))
    if otu and not out["report_in_placement"]:
        # Nova refuses the tag without it (nova/pci/devspec.py): the provider's reservation is the whole mechanism
        raise NovaConfigError("one_time_use: needs report_in_placement true (Nova reserves a one-time-use device "
                              "in Placement; without PCI in Placement it refuses the device_spec), got %s for %s"
                              % (out["report_in_placement"], ", ".join(otu)))
    if out["host"] is not None and not isinstance(out["host"], str):
        raise NovaConfigError("host: must be a string, got %r" % (out["host"],))
    return out


def _records(discovery):
    return _cardstate.records(discovery) or []


def _hostname(discovery):
    if isinstance(discovery, dict):
        return (discovery.get("host") or {}).get("hostname")
    return None


def _json(obj):
    return json.dumps(obj, sort_keys=True, separators=(", ", ": "))


def _traits(assignment):
    out = [assignment["trait"]]
    for t in assignment["placement"]["traits"]:
        if t not in out:
            out.append(t)
    return out


class _Renderer:
    def __init__(self, functions, discovery, options):
        self.opts = _options(options)
        self.resolution = _declaration.resolve(functions, discovery)
        self.records = _records(discovery)
        self.by_addr = dict((r["address"], r) for r in self.records)
        self.problems = list(self.resolution["problems"])
        self.mdev = {}            # type id -> {"device_addresses", "mdev_class", "max_instances", "functions"}
        self.specs = []           # (function, spec dict)
        self.aliases = {}         # alias name -> (function, [alias dicts])
        self.cyborg = set()
        self.functions = {}

    # -- what Nova is given: Cyborg's drivers, an mdev type, PCI devices ---------------------------------------

    def _note(self, a, nova_kind, **extra):
        f = self.functions.setdefault(a["function"], {"kind": a["kind"], "handled_by": nova_kind, "cards": [],
                                                      "alias": None, "resource_class": None, "mdev_type": None,
                                                      "addresses": []})
        f["cards"].append(a["address"])
        for k, v in extra.items():
            if isinstance(f.get(k), list):
                f[k].extend(x for x in v if x not in f[k])
            elif v is not None:
                f[k] = v

    def _cyborg(self, a, card):
        rec = dict(card, family=a["family"], address=a["address"])
        drv, problem = for_record(rec).cyborg_driver(rec)
        if problem:
            self.problems.append("%s: %s" % (a["function"], problem))
        if drv is None:
            return
        self.cyborg.add(drv)
        self._note(a, "cyborg", addresses=[a["address"]])

    def _mdev(self, a, devices):
        tid, addrs = devices["mdev_type"], devices["addresses"]
        rc = a["placement"]["resource_class"] or "VGPU"
        if not MDEV_CLASS_RE.match(rc):
            self.problems.append("%s: placement.resource_class %s cannot be an mdev_class (Nova accepts VGPU or "
                                 "CUSTOM_*); using VGPU" % (a["function"], rc))
            rc = "VGPU"
        sect = self.mdev.setdefault(tid, {"device_addresses": [], "mdev_class": rc, "max_instances": None,
                                          "functions": []})
        if sect["mdev_class"] != rc:
            self.problems.append("%s: mdev type %s is already given mdev_class %s by %s; Nova has one class per "
                                 "type, so %s gets %s" % (a["function"], tid, sect["mdev_class"],
                                                          ", ".join(sect["functions"]), a["address"],
                                                          sect["mdev_class"]))
        for addr in addrs:
            if addr not in sect["device_addresses"]:
                sect["device_addresses"].append(addr)
        if devices["on_vfs"]:
            sect["max_instances"] = (sect["max_instances"] or 0) + len(addrs)
        if a["function"] not in sect["functions"]:
            sect["functions"].append(a["function"])
        self._note(a, "nova-mdev", mdev_type=tid, resource_class=sect["mdev_class"], addresses=addrs)

    def _pci(self, a, card, devices):
        fn = a["function"]
        physnet = self.opts["physical_networks"].get(fn) or a["nova"].get("physical_network")
        rc = a["placement"]["resource_class"]
        if rc is None:
            rc = devices["resource_class"]
        managed = a["nova"]["managed"]
        if managed is None:
            managed = devices["managed"]
        vendor = card.get("vendor_id")
        addrs, product = devices["addresses"], devices["product_id"]
        device_type = a["nova"]["device_type"] or devices["device_type"]
        traits = _traits(a)
        one_time_use = fn in self.opts["one_time_use"]
        if one_time_use and (physnet or device_type == "type-VF"):
            self.problems.append("%s: one_time_use needs the device whole (Nova takes the tag on type-PCI and "
                                 "type-PF devices only), but it is given as %s; no one_time_use tag rendered"
                                 % (fn, "Neutron SR-IOV ports" if physnet else "VFs (type-VF)"))
            one_time_use = False
        if not physnet:
            traits += [t for t in self._discovered_function_traits(addrs, devices["vfs_of"]) if t not in traits]
        for addr in addrs:
            spec = {"vendor_id": vendor, "product_id": product, "address": addr}
            if physnet:
                spec["physical_network"] = physnet
            else:
                spec["traits"] = ",".join(traits)
                if rc:
                    spec["resource_class"] = rc
            if managed is not None:
                spec["managed"] = "yes" if managed else "no"
            if one_time_use:
                spec["one_time_use"] = "true"
            self.specs.append((fn, spec))
        self._note(a, "nova-pci", resource_class=None if physnet else rc, addresses=addrs)
        if physnet or not addrs:
            return
        alias = {"name": a["nova"]["alias"], "device_type": device_type, "vendor_id": vendor, "product_id": product}
        if a["nova"]["numa_policy"]:
            alias["numa_policy"] = a["nova"]["numa_policy"]
        if self.opts["report_in_placement"]:
            alias["traits"] = a["trait"]
            if rc:
                alias["resource_class"] = rc
        self.functions[fn]["alias"] = alias["name"]
        owner, have = self.aliases.setdefault(alias["name"], (fn, []))
        if owner != fn:
            self.problems.append("%s: alias %r is already used by function %s" % (fn, alias["name"], owner))
            return
        if alias not in have:
            have.append(alias)

    def _discovered_function_traits(self, addrs, vfs_of):
        """The function traits the collection's Placement code gives the units Nova will pool on these devices'
        providers (the discovered function's own trait: an FPGA's function id, a vGPU type's name). Nova writes a
        PCI provider's traits from the device_spec alone and drops any other, so they go into the spec; every
        spec of one provider gets the same, as Nova refuses VFs of one PF with different traits."""
        parents = set()
        for r in self.records:
            if r["address"] in addrs or (vfs_of and r.get("physfn") == vfs_of):
                parents.add(r.get("physfn") or r["address"])
        out = set()
        for r in self.records:
            if (r.get("physfn") or r["address"]) in parents:
                for spec in _device_specs(r, self.by_addr, self.resolution["function_names"]):
                    out.update(t for t in spec[3] if is_function_trait(t))
        return sorted(out)

    # -- all ----------------------------------------------------------------------------------------------

    def run(self):
        declared = set(a["function"] for a in self.resolution["assignments"])
        for fn in self.opts["one_time_use"]:
            if fn not in declared:
                self.problems.append("one_time_use: %s is not a function assigned on this host; nothing marked" % fn)
        for a in self.resolution["assignments"]:
            card = self.by_addr.get(a["address"]) or {}
            if a["family"] in self.opts["cyborg_families"]:
                self._cyborg(a, card)
                continue
            # how Nova offers the function is the kind's (an mdev type, VFs, the device whole)
            devices, problems = kind(a["kind"]).nova_spec(a, card, self.by_addr)
            self.problems.extend(problems)
            if devices is None:
                continue
            if "mdev_type" in devices:
                self._mdev(a, devices)
            else:
                self._pci(a, card, devices)
        for name, (fn, have) in sorted(self.aliases.items()):
            if len(have) > 1 and self.opts["report_in_placement"]:
                rcs = set(x.get("resource_class") for x in have)
                if len(rcs) == 1 and None not in rcs:
                    # one resource class for every card: one alias by class and trait, without ids
                    merged = dict(have[0])
                    merged.pop("vendor_id")
                    merged.pop("product_id")
                    have[:] = [merged]
                else:
                    self.problems.append(
                        "%s: its cards have different PCI ids (%s) and Nova's PCI-in-Placement allows one alias "
                        "per name: declare placement.resource_class for it" % (
                            fn, ", ".join("%s:%s" % (x["vendor_id"], x["product_id"]) for x in have)))
        return self.result()

    def result(self):
        mdev_types = [dict(type=t, **v) for t, v in sorted(self.mdev.items())]
        for m in mdev_types:
            m["device_addresses"] = sorted(m["device_addresses"])
        specs = [s for _f, s in sorted(self.specs, key=lambda fs: (fs[1]["address"], fs[0]))]
        aliases = [x for _n, (_f, have) in sorted(self.aliases.items()) for x in have]
        sections = []
        if mdev_types:
            sections.append(("devices", [("enabled_mdev_types", ",".join(m["type"] for m in mdev_types))]))
            for m in mdev_types:
                body = [("device_addresses", ",".join(m["device_addresses"])), ("mdev_class", m["mdev_class"])]
                if m["max_instances"]:
                    body.append(("max_instances", str(m["max_instances"])))
                sections.append(("mdev_%s" % m["type"], body))
        if specs or aliases or self.opts["report_in_placement"]:
            body = []
            # Written even when this host has no device_spec: Nova reads a missing option as False, and a compute
            # node that reported PCI devices before then stops reporting (PlacementPciException: it cannot be
            # turned off once on), e.g. a host that moves to mdev vGPUs only.
            if self.opts["report_in_placement"]:
                body.append(("report_in_placement", "True"))
            body.extend(("device_spec", _json(s)) for s in specs)
            body.extend(("alias", _json(x)) for x in aliases)
            sections.append(("pci", body))
        host = self.opts["host"]
        nova_conf = render_ini(sections, host)
        cyborg_sections = [("agent", [("enabled_drivers", ",".join(sorted(self.cyborg)))])] if self.cyborg else []
        return {
            "nova_conf": nova_conf,
            "nova_sections": [[name, [list(kv) for kv in body]] for name, body in sections],
            "alias_conf": api_conf(aliases, self.opts["report_in_placement"]),
            "cyborg_conf": render_ini(cyborg_sections, host) if cyborg_sections else "",
            "mdev_types": mdev_types,
            "device_specs": specs,
            "aliases": aliases,
            "cyborg_drivers": sorted(self.cyborg),
            "functions": self.functions,
            "problems": self.problems,
            "resolution": self.resolution,
        }


def render_ini(sections, host):
    """INI text: the marker line, then ``[section]`` blocks; a key repeated in a section is a multi-valued
    option (oslo.config MultiStrOpt: ``device_spec``, ``alias``)."""
    lines = [MARKER]
    if host:
        lines.append("# host: %s" % host)
    lines.append("# Do not edit: the next run overwrites it. Change the declaration instead.")
    for name, body in sections:
        lines.append("")
        lines.append("[%s]" % name)
        for key, value in body:
            lines.append("%s = %s" % (key, value))
    return "\n".join(lines) + "\n"


def render(functions, discovery, options=None):
    """Nova/Cyborg configuration for one host: see the module docstring. ``options``: ``report_in_placement``
    (default true), ``cyborg_families`` (families left to Cyborg), ``physical_networks`` (function name to
    Neutron physical network), ``host`` (named in the file's header). Raises NovaConfigError or
    _declaration.DeclarationError for unusable input."""
    opts = _options(options)
    if opts["host"] is None:
        opts["host"] = _hostname(discovery)
    return _Renderer(functions, discovery, opts).run()


NOVA_PCI_TRAIT = "COMPUTE_MANAGED_PCI_DEVICE"
NOVA_OWNER_TRAIT = "OWNER_NOVA"
NOVA_ONE_TIME_USE_TRAIT = "HW_PCI_ONE_TIME_USE"   # Nova adds it to the provider of a one_time_use device
_NOT_PLACEMENT_CHARS = re.compile(r"[^A-Z0-9_]+")


def _nova_normalize(name):
    """Nova's normalisation of a device_spec ``traits`` or ``resource_class`` value (os_traits/os_resource_classes
    ``normalize_name``): upper case, runs of other characters to ``_``, ``CUSTOM_`` in front unless there."""
    name = name.strip().upper()
    if not _NOT_PLACEMENT_CHARS.search(name):
        return name     # CUSTOM_* or a standard name (the declaration accepts no other form)
    return "CUSTOM_" + _NOT_PLACEMENT_CHARS.sub("_", name)


def _nova_dev_type(rec):
    """The dev_type Nova's libvirt driver gives a PCI function: libvirt's ``phys_function`` capability (a VF),
    its ``virt_functions`` capability (sriov_totalvfs > 0: a PF, even with no VF enabled), else type-PCI."""
    if rec.get("physfn"):
        return "type-VF"
    if ((rec.get("sriov") or {}).get("totalvfs") or 0) > 0:
        return "type-PF"
    return "type-PCI"


def _spec_matches(spec, rec, pfs):
    """Nova's devspec match: the ids, and the address itself or, when the spec's address is a PF's, that PF's
    VFs (nova/pci/devspec.py WhitelistPciAddress.match)."""
    if (spec.get("vendor_id") or "").lower() != (rec.get("vendor_id") or "").lower():
        return False
    if (spec.get("product_id") or "").lower() != (rec.get("device_id") or "").lower():
        return False
    addr = spec.get("address")
    return addr == rec["address"] or (addr in pfs and rec.get("physfn") == addr)


def nova_pgpu_provider_name(nodename, address):
    """Nova's name for the provider of an mdev parent: ``<nodename>_<libvirt node device name>``, libvirt naming
    a PCI device ``pci_DDDD_BB_SS_F`` (lower-case hex), e.g. ``compute1_pci_0000_84_00_0``."""
    return reporter_provider_name(nodename, address, "nova", mdev=True)


def nova_pci_provider_name(nodename, address):
    """Nova's name for a PCI provider (pci_placement_translator): ``<nodename>_<address upper-case>``, the PF's
    address for VFs, e.g. ``compute1_0000:D8:00.0``."""
    return reporter_provider_name(nodename, address, "nova")


def nova_expected_providers(functions, discovery, options=None, nodename=None):
    """What Nova reports to Placement for this host's declared devices, as Nova 34 makes it: a list of
    ``{name, kind ("pci" or "vgpu"), address, devices, resource_class, total, traits, function_traits,
    functions}`` sorted by name. ``traits`` are the traits Nova itself writes (and rewrites every periodic
    update); ``function_traits`` are the function's traits, which for PCI providers are part of ``traits``
    (they come from the device_spec ``traits`` tag) and for vGPU providers must be added from outside (Nova keeps
    them there). ``nodename`` is the compute node's hypervisor hostname (the root provider's name); default the
    discovery's hostname. Physical-network device specs (Neutron SR-IOV) are not reported by Nova and are left
    out; so is everything when ``report_in_placement`` is false, except vGPUs."""
    opts = _options(options)
    if opts["host"] is None:
        opts["host"] = _hostname(discovery)
    nodename = nodename or opts["host"]
    if not nodename:
        raise NovaConfigError("nodename: the compute node's hypervisor hostname is needed (the discovery names "
                              "no host)")
    renderer = _Renderer(functions, discovery, opts)
    result = renderer.run()
    records = _records(discovery)
    pfs = set(r["address"] for r in records if _nova_dev_type(r) == "type-PF")
    spec_fn = dict((id(s), f) for f, s in renderer.specs)
    out = {}
    if opts["report_in_placement"]:
        for rec in sorted(records, key=lambda r: r["address"]):
            # Nova uses the first device_spec that matches a device (nova/pci/whitelist.py get_devspec)
            spec = next((s for s in result["device_specs"] if _spec_matches(s, rec, pfs)), None)
            if spec is None or spec.get("physical_network"):
                continue
            dev_type = _nova_dev_type(rec)
            parent = rec["physfn"] if dev_type == "type-VF" else rec["address"]
            traits = sorted(set(_nova_normalize(t) for t in (spec.get("traits") or "").split(",") if t.strip())
                            | set([NOVA_PCI_TRAIT, NOVA_OWNER_TRAIT])
                            | set([NOVA_ONE_TIME_USE_TRAIT] if spec.get("one_time_use") == "true" else []))
            rc = (_nova_normalize(spec["resource_class"]) if spec.get("resource_class")
                  else ("CUSTOM_PCI_%s_%s" % (rec["vendor_id"], rec["device_id"])).upper())
            name = nova_pci_provider_name(nodename, parent)
            p = out.setdefault(name, {"name": name, "kind": "pci", "address": parent, "devices": [],
                                      "resource_class": rc, "total": 0, "traits": traits,
                                      "function_traits": [], "functions": []})
            p["devices"].append(rec["address"])
            p["total"] += 1
            fn = spec_fn.get(id(spec))
            if fn and fn not in p["functions"]:
                p["functions"].append(fn)
    by_addr = dict((r["address"], r) for r in records)
    used = {}
    for m in result["mdev_types"]:
        for addr in m["device_addresses"]:
            rec = by_addr.get(addr) or {}
            gpu = rec.get("gpu") or {}
            t = next((x for x in gpu.get("mdev_types") or [] if x.get("id") == m["type"]), None)
            if t is None:
                continue
            # total: the mdevs of the type that exist plus those that can still be created
            # (LibvirtDriver._get_gpu_inventories); an mdev of another type on the GPU does not count
            made = len([x for x in gpu.get("mdevs") or [] if x.get("type") == m["type"]])
            total = made + int(t.get("available_instances") or 0)
            limit = m.get("max_instances")
            if limit and used.get(m["type"], 0) + total > limit:
                continue  # Nova skips a parent past the type's max_instances
            used[m["type"]] = used.get(m["type"], 0) + total
            if total <= 0:
                continue  # Placement takes no total of 0: Nova makes no provider
            name = nova_pgpu_provider_name(nodename, addr)
            out[name] = {"name": name, "kind": "vgpu", "address": addr, "devices": [addr],
                         "resource_class": m["mdev_class"], "total": total, "traits": [NOVA_OWNER_TRAIT],
                         "function_traits": [], "functions": list(m["functions"])}
    traits_of = dict((a["function"], _traits(a)) for a in result["resolution"]["assignments"])
    for p in out.values():
        p["function_traits"] = sorted(set(t for fn in p["functions"] for t in traits_of.get(fn, [])))
        p["functions"] = sorted(p["functions"])
    return [out[n] for n in sorted(out)]


def api_conf(aliases, pci_in_placement):
    """The file for nova-api, nova-scheduler and nova-conductor: ``[pci] alias`` and, when the compute hosts
    report PCI devices to Placement, ``[filter_scheduler] pci_in_placement = True``. Without it the scheduler
    ignores the PCI providers (and the function traits on them): an alias becomes no Placement request group
    (nova/objects/request_spec.py ``generate_request_groups_from_pci_requests``). Only the header when there is
    no alias."""
    if not aliases:
        return render_ini([], None)
    sections = [("pci", [("alias", _json(x)) for x in aliases])]
    if pci_in_placement:
        sections.append(("filter_scheduler", [("pci_in_placement", "True")]))
    return render_ini(sections, None)


def merge_aliases(per_host, pci_in_placement=None):
    """One ``[pci] alias`` list for the API/scheduler nodes from several hosts' results (or alias lists).

    Identical aliases are kept once. Nova's legacy PCI tracker accepts one name with several specifications
    (any of them); with PCI-in-Placement (aliases with a resource class or traits) a name must have one
    specification, so a difference there is a problem. ``pci_in_placement``: write ``[filter_scheduler]
    pci_in_placement = True`` (default: when an alias has a resource class or traits, i.e. came from hosts that
    report to Placement)."""
    by_name, problems = {}, []
    for item in per_host:
        aliases = item.get("aliases") if isinstance(item, dict) else item
        for a in aliases or []:
            have = by_name.setdefault(a["name"], [])
            if a not in have:
                have.append(a)
    out = []
    for name in sorted(by_name):
        have = sorted(by_name[name], key=_json)
        if len(have) > 1 and any("resource_class" in a or "traits" in a for a in have):
            problems.append("alias %s differs between hosts (%s); with PCI-in-Placement a name has one "
                            "specification" % (name, " / ".join(_json(a) for a in have)))
        out.extend(have)
    if pci_in_placement is None:
        pci_in_placement = any("resource_class" in a or "traits" in a for a in out)
    return {"aliases": out, "problems": problems,
            "alias_conf": api_conf(out, pci_in_placement)}


# Versioned notifications for event consumers (docs/events.md): Kolla-Ansible writes driver = noop unless one asks.
NOTIFICATION_TOPIC = "versioned_notifications"


def with_notifications(rendered, topics):
    """``rendered`` (:func:`render`'s result) with Nova's versioned notifications switched on in its nova.conf:
    ``[notifications] notification_format = versioned`` and ``versioned_notifications_topics``, and
    ``[oslo_messaging_notifications] driver = messagingv2`` (oslo.messaging on the RPC bus unless the deployment
    sets a ``transport_url`` there). ``topics``: a list of topic names, or empty/None to leave the file as it is."""
    if not topics:
        return rendered
    if isinstance(topics, str):
        topics = [topics]
    names_ok = isinstance(topics, list) and all(isinstance(t, str) and re.match(r"^[A-Za-z0-9_.-]+$", t)
                                                for t in topics)
    if not names_ok:
        raise NovaConfigError("notifications: a list of topic names (e.g. [%s]), got %r" % (NOTIFICATION_TOPIC, topics))
    sections = [("notifications", [("notification_format", "versioned"),
                                   ("versioned_notifications_topics", ",".join(topics))]),
                ("oslo_messaging_notifications", [("driver", "messagingv2")])]
    out = dict(rendered)
    out["nova_conf"] = rendered["nova_conf"] + "".join(
        "\n[%s]\n%s" % (name, "".join("%s = %s\n" % kv for kv in body)) for name, body in sections)
    out["nova_sections"] = list(rendered.get("nova_sections") or []) + [
        [name, [list(kv) for kv in body]] for name, body in sections]
    return out
