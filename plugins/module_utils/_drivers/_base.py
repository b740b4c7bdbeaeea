# -*- coding: utf-8 -*-
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The interface every accelerator family driver implements, and helpers they share.

A driver is a small stateless object. Discovery asks :meth:`Driver.claims` of each driver in
registry order (first claim wins), then :meth:`Driver.describe` for each claimed function that
survives the filters. Programming is not a driver's: the engines (``_engines``) ask the family's hooks what differs.
:class:`Kind` is what the shared code asks of a declaration kind; the generic one, ``passthrough``, is here.

Standard library only, Python 3.9+ (this runs on managed hosts).
"""

from __future__ import annotations

import errno
import os
import re
from abc import ABCMeta, abstractmethod

from ansible_collections.accelops.lifecycle.plugins.module_utils import _naming
from ansible_collections.accelops.lifecycle.plugins.module_utils._plan import Refusal
from ansible_collections.accelops.lifecycle.plugins.module_utils._vocab import UUID_RE
from ansible_collections.accelops.lifecycle.plugins.module_utils._sysfs import (
    errno_text,
    read_attr_real,
    read_attrs_real,
    readlinks_real,
)

__metaclass__ = type

MODELS = ("dynamic", "single", "fixed")

_ALL_F = re.compile(r"^(0x)?[fF]+$")
# the "max_instance=N" of an mdev type's description
MAX_INSTANCE_RE = re.compile(r"max_instance\s*=\s*(\d+)")


class Driver(metaclass=ABCMeta):
    """What the shared code asks a family, every hook in one list. A family must answer the two abstract ones
    (:meth:`claims`, :meth:`describe`: a driver that does not cannot be made); every other hook has the default
    documented where it is declared below, which a family overrides only where it differs. (FPGA families answer
    more: :class:`_drivers.fpga.FpgaDriver`'s abstract hooks.)

    - identity: ``name``, ``family``, ``programming_model``, ``claims_vfs``, ``summarize_vfs``, ``discovery_tool``
    - discovery: ``claims`` (abstract), ``describe`` (abstract), ``is_secondary``, ``related_addresses``,
      ``describe_folded_vf``, ``matches_record``
    - Placement: ``vfs_pooled_in_pf``, ``discovered_function_trait``, ``provider_specs``, ``host_provider_specs``
    - the card as one device (Nova, Ironic): ``function_carriers``, ``card_view``
    - SR-IOV (the sriov engine): ``owns_sriov_pf``, ``vf_count_refusal``, ``vf_driver_refusal``
    - Cyborg: ``cyborg_driver_name``, ``cyborg_profile_classes``, ``pci_vendors``, ``cyborg_vendor``,
      ``cyborg_driver``, ``no_cyborg_driver``, ``cyborg_vendor_trait``, ``cyborg_function_trait``
    - Ironic: ``ironic_type``, ``ironic_default``
    - in use: ``in_use_evidence``, ``held_device_nodes``
    - vendor-specific VFIO vGPUs (the vgpu engine): ``vendor_vfio_vendor``, ``vendor_vfio_name``,
      ``vendor_vfio_backend``, ``vendor_vfio_why_not``, ``vendor_vfio_unmanaged``
    - one-time-use devices: ``reuse_reset``
    """

    name = "base"
    family = "pci"
    programming_model = "fixed"
    claims_vfs = True  # VFs of a function this driver claims are claimed by it too
    # With vf_detail "summary", a VF whose PF is reported too is folded into the PF's record (its units in
    # sriov.vf_units). False for families whose VFs are accelerators of their own with family data (FPGA
    # port VFs, one or a few per card): those always stay records.
    summarize_vfs = True

    @abstractmethod
    def claims(self, func, ctx=None):
        """True when this driver handles ``func`` (a :class:`_pci.PciFunction`). Must be cheap: only
        the first-pass fields (ids, class, kernel driver, physfn) should be needed."""

    # the read-only vendor tool discovery may run for the family's cards: (tool, the module option that says where it
    # is or that it is not run, what discovery does not read without it); None: the family runs none
    discovery_tool = None

    def is_secondary(self, func, ctx):
        """True when ``func`` is reported inside another function's record (e.g. the management PF
        of a card whose record is its user PF)."""
        return False

    def related_addresses(self, func, ctx):
        """Addresses an ``addresses`` filter may name to select this function's record."""
        out = [func.address]
        if func.physfn:
            out.append(func.physfn)
        return out

    @abstractmethod
    def describe(self, func, ctx):
        """Family-specific fields to merge into the function's record (see docs/discovery.md):
        any of ``programming_model``, ``function``, ``healthy``, ``units`` (extra units besides the
        function itself), and the family section (``gpu``, ``fpga``, ``qat``, ``nic``); ``{}`` when it adds none."""

    def describe_folded_vf(self, func, ctx):
        """What ``vf_detail: summary`` keeps of a VF folded into its PF's record: ``unit_type``, ``units`` and,
        for a NIC, ``nic.mac`` and the first of ``nic.interfaces`` (its ``name``). A driver that can read less
        for that than for a record overrides it."""
        return self.describe(func, ctx)

    # -- Placement: what providers a record of this family becomes -------------------------------------
    # A VF of a PF that is reported too adds to its PF's provider (the PF's inventory counts its VFs) instead of
    # being a provider of its own.
    vfs_pooled_in_pf = False

    def discovered_function_trait(self, record, function):
        """The trait of a loaded function when discovery gave it none (``function["trait"]`` wins), or None."""
        return _naming.discovered_function_trait(function.get("name"), function.get("id"))

    def provider_specs(self, record, base_traits, function_traits):
        """The Placement providers of one discovery record: ``[(address, resource class or None, total, traits,
        note)]`` (no resource class: a provider without inventory, ``note`` says why). ``base_traits``: the traits
        every provider of the record carries; ``function_traits(function)``: the traits of a loaded function.
        The default is generic passthrough, in Nova's own resource class form ``CUSTOM_PCI_<VID>_<PID>``."""
        addr = record.get("address")
        try:
            rc = _naming.pci_resource_class(record.get("vendor_id"), record.get("device_id"))
        except ValueError:
            return [(addr, None, 0, base_traits, "no usable PCI ids: no inventory")]
        return [(addr, rc, 1, base_traits, None)]

    def host_provider_specs(self, record, by_addr, base_traits, function_traits):
        """:meth:`provider_specs` with the host's records at hand (``by_addr``: address -> record), for a family
        whose card is more than one record (a PF whose function sits on its VFs). The default ignores them."""
        return self.provider_specs(record, base_traits, function_traits)

    # -- the card as one device: where its function is, for Nova's device_spec and Ironic's node traits -----
    def function_carriers(self, record, by_addr):
        """The records of the card ``record`` that carry its loaded function and are what a guest is given: the
        card itself, unless the family moves the function to the card's VFs (``by_addr``: the host's records)."""
        return [record]

    def card_view(self, record, by_addr):
        """The card ``record`` as one device: what its :meth:`function_carriers` show of the loaded function
        folded into it (the default, where the card carries it itself: the record unchanged)."""
        return record

    def matches_record(self, record):
        """True when a recorded discovery is this driver's by its content (``for_record``'s choice when the
        record's ``handler`` is not a built-in driver of its family)."""
        return record.get("family") == self.family

    # -- SR-IOV programming (sriov_vfs): the family's rules for a PF's VF count -------------------------------
    def owns_sriov_pf(self, pf):
        """True when this family's SR-IOV rules apply to a PF as ``_engines.sriov.read_pf`` reads it (``vendor``,
        ``device``: 4 hex digits; ``driver``: the bound kernel driver or None)."""
        return False

    def vf_count_refusal(self, pf, num_vfs):
        """Why the VF count of ``pf`` cannot be changed to ``num_vfs`` by writing ``sriov_numvfs``, or None. The
        default is the kernel's own rule, which the engine follows: 0 first, then the new count."""
        return None

    def vf_driver_refusal(self, pf, vf_driver):
        """Why the VFs of ``pf`` cannot be bound to ``vf_driver``, or None (the default: any loaded driver)."""
        return None

    # -- Cyborg: which of its drivers reports this card, and the device profile's friendly form -----------------
    cyborg_driver_name = None     # the Cyborg driver that reports this family's cards (cyborg.conf enabled_drivers)
    # the friendly form's ``family`` words that ask for this family's cards -> the resource class Cyborg reports them with
    cyborg_profile_classes = {}
    # the PCI vendors of this driver's cards by the names the friendly form's ``vendor`` takes -> their vendor ids
    pci_vendors = {}

    def cyborg_vendor(self, record):
        return record.get("vendor_id")

    def cyborg_driver(self, record):
        """``(Cyborg's driver for this card or None, a problem to report or None)``: :attr:`cyborg_driver_name`."""
        if self.cyborg_driver_name:
            return self.cyborg_driver_name, None
        return None, self.no_cyborg_driver(record)

    def no_cyborg_driver(self, record):
        """The problem reported for a card no Cyborg driver reports."""
        return "Cyborg has no driver for %s cards of vendor %s (%s); not configured" % (
            record.get("family"), self.cyborg_vendor(record), record.get("address"))

    def cyborg_vendor_trait(self, vendor):
        """The trait a device profile's friendly ``vendor`` (a name, not a PCI id) requires of this family's cards,
        or None: ``CUSTOM_VENDOR_<PCI vendor id>``, the same for every family."""
        return None

    def cyborg_function_trait(self, vendor, function):
        """The trait of Cyborg's function id ``function`` of this family's cards of ``vendor`` (the friendly form's
        ``function_id``), or None when Cyborg names no function of the family by id."""
        return None

    # -- Ironic: how a bare-metal node lists this family's cards (``properties.accelerators``) --------------------
    ironic_type = "PCI"           # the entry's ``type``
    ironic_default = False        # listed, and given hardware traits, unless the families are chosen

    # -- in use: evidence the family's own section holds besides the units' ----------------------------------
    def in_use_evidence(self, card):
        """Evidence lines (``_cardstate.card_in_use``'s form) for users of the card that its units do not show."""
        return []

    def held_device_nodes(self, sysfs):
        """A test of a device path (an open file's ``/proc/<pid>/fd`` link) through which a process holds the
        family's units besides VFIO, when the host has such nodes (``_inuse`` then records their holders by path in
        ``InUse.by_path``); None when it has none, so that no process scan is made for them."""
        return None

    # -- vendor-specific VFIO: vGPUs as SR-IOV VFs typed through the vendor's own sysfs, served by its host driver ----
    vendor_vfio_vendor = None     # the PCI vendor id of the family's GPUs that give such vGPUs (None: none do)
    vendor_vfio_name = None       # what messages call such GPUs ("an SR-IOV NVIDIA GPU")

    def vendor_vfio_backend(self):
        """The vgpu module's ``vendor_vfio`` backend for such GPUs (``plan`` and ``finish`` of a card:
        ``_engines.vgpu``), imported on first use; None when the family has none."""
        return None

    def vendor_vfio_why_not(self, unit):
        """Why a VF of such a GPU (a hostdev unit: ``vgpu_type``) cannot be given to a guest, or None."""
        return None

    def vendor_vfio_unmanaged(self):
        """``(what a VF of such a GPU is called, why libvirt must not rebind it)``: hostdev renders it ``managed='no'``
        and refuses ``managed: yes``; None when the family has no such VFs."""
        return None

    # -- one-time-use devices: what "reset" means before the next tenant gets the device ---------------------
    def reuse_reset(self, sysfs, record, assignment):
        """How this family resets a one-time-use device (Nova's ``one_time_use``) before it is given out again: a
        :class:`ReuseReset`. ``assignment``: the declared function assigned to the device (an assignment of
        ``_declaration.resolve``), None when none is.

        Default, for families whose function's own reset clears what a tenant left (GPUs, NIC and QAT devices):
        the kernel's reset of the function through sysfs ``reset`` (a function-level reset, or the method the
        kernel chose for the device), then the device read back: it answers with the same vendor and device ids
        and is bound to the same driver. Refused, saying so, where the kernel offers no reset (no ``reset``
        attribute: it found no reset method for the device). A family whose reset is something else overrides
        this (FPGA: load the declared function again); one that has none raises :class:`Refusal`."""
        addr = record["address"]
        base = "/sys/bus/pci/devices/%s" % addr
        if not sysfs.exists(base + "/reset"):
            raise Refusal("%s: the kernel offers no reset for it (no %s/reset: no reset method), so it cannot be "
                          "cleaned for the next tenant" % (addr, base))
        want = ("0x" + record.get("vendor_id", ""), "0x" + record.get("device_id", ""))
        driver = sysfs.link_name(base + "/driver")

        def run():
            sysfs.write(base + "/reset", "1")
            got = (sysfs.read_optional(base + "/vendor"), sysfs.read_optional(base + "/device"))
            if got != want:
                raise Refusal("%s: after the reset it answers as %s:%s, not %s:%s"
                              % (addr, got[0], got[1], want[0], want[1]))
            now = sysfs.link_name(base + "/driver")
            if now != driver:
                raise Refusal("%s: after the reset it is bound to %s, not %s"
                              % (addr, now or "no driver", driver or "no driver"))
            return "reset by the kernel (%s/reset), answers as %s:%s, bound to %s" % (
                base, want[0], want[1], driver or "no driver")
        return ReuseReset("the kernel's function reset (%s/reset), then the ids and driver read back" % base, run)


class ReuseReset(object):
    """A family's reset of one one-time-use device: ``description`` (what it does, for the plan), and either
    ``run()`` (resets and verifies; returns what it read back, raises ``_plan.Refusal`` saying why it failed) or
    ``program`` (``(kind name, module arguments)``: the family's programming module does it, its read-back being
    the verification)."""

    def __init__(self, description, run=None, program=None):
        self.description = description
        self.run = run
        self.program = program


# -- declaration kinds -------------------------------------------------------------------------------
# What a declaration entry asks a card to carry (docs/declaration.md): a bitstream, a vGPU type, a VF count, a MIG
# layout, or the device as it is. Each kind is one object in the file of the family that owns it, registered in
# _drivers/__init__.py; the declaration, the converge, the pool keeper and the provisioning choice ask it.
DRIVER_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# the converge's settings the host programming modules take (the module's option -> accelerator_converge's option)
HOST_PROGRAM_SETTINGS = {"persistent": "persistent", "persist_root": "persist_root", "tool_timeout": "tool_timeout",
                         "libvirt_run_dir": "libvirt_run_dir"}


class Kind(metaclass=ABCMeta):
    """One kind of declared function. The shared code asks it everything that differs between kinds; the
    defaults are a function that nothing programs and that a card offers as one unit."""

    name = None
    keys = ()                # the keys of the entry's section (``<name>: {...}``), in the order messages list them
    families = None          # the families whose cards can carry it (None: any)
    module = None            # the module that programs it (None: nothing does, the card is used as it is)
    converge_settings = {}   # accelerator_converge's settings that module takes: its option -> the converge's option
    provision_keys = ()      # the provision filter's ``{how}`` of this kind, the key that marks it first
    provision_id_key = None  # the key of ``{how}`` that holds the function id or type
    provision_label = None   # what the provision filter's messages call it

    @abstractmethod
    def validate(self, c, raw):
        """The entry's section ``raw`` normalised; ``c`` (the declaration's checker) fails naming the key."""

    def refusal(self, entry, card):
        """Why ``card`` (a record of one of :attr:`families`) cannot carry ``entry``'s function, or None."""
        return None

    @abstractmethod
    def carries(self, entry, card, by_addr):
        """Whether ``card`` offers ``entry``'s function exactly already (nothing to program); ``by_addr``: the host's
        records by address."""

    def module_args(self, entry, address):
        """The arguments of :attr:`module` for the card at ``address`` (None when nothing programs it)."""
        return None

    def program(self):
        """The :class:`_hostmodule.Program` of :attr:`module`, its engine (``_engines.ENGINES``) imported on first use:
        a module that only asks the registry does not load or ship it. None when nothing programs the kind."""
        if self.module is None:
            return None
        from ansible_collections.accelops.lifecycle.plugins.module_utils import _engines  # pylint: disable=import-outside-toplevel
        return _engines.program(self.module)

    def function_names(self, entry):
        """``{function id or type: entry name}``, every spelling of it a card or Placement may show."""
        return {}

    def units(self, entry, card):
        """The free units ``card`` offers once it carries ``entry``'s function, before anyone uses it."""
        return 1

    def nova_spec(self, assignment, card, by_addr):
        """How Nova offers the function of ``assignment`` (a resolution's) on ``card`` (``by_addr``: the host's records
        by address): ``(spec, problems)``. ``spec`` is None when Nova is given nothing (``problems`` say why), an mdev
        type ``{mdev_type, addresses, on_vfs}`` (``[mdev_<type>]``: the parents, ``on_vfs`` when they are VFs; no
        type: nothing offered) or PCI devices ``{addresses, product_id, device_type, vfs_of, resource_class,
        managed}`` (one ``[pci] device_spec`` per address; ``vfs_of``: the PF whose VFs they are, when the specs stand
        for its VFs; ``resource_class`` and ``managed``: what applies when the declaration says nothing). The default
        is the device passed whole: what carries the function, the card or the VFs its family moves it to."""
        # the registry is imported here because it imports this file
        from ansible_collections.accelops.lifecycle.plugins.module_utils._drivers import for_record  # pylint: disable=import-outside-toplevel
        carriers = for_record(card).function_carriers(card, by_addr) if card else []
        spec = {"vfs_of": None, "resource_class": None, "managed": None}
        if carriers and all(c.get("physfn") == card["address"] for c in carriers):
            spec.update(addresses=sorted(c["address"] for c in carriers), product_id=carriers[0].get("device_id"),
                        device_type="type-VF")
        else:
            spec.update(addresses=[card["address"]], product_id=card.get("device_id"),
                        device_type="type-PF" if (card.get("sriov") or {}).get("totalvfs") else "type-PCI")
        return spec, []

    # -- the provision filter (playbooks/provision_profiles.yml): ``{function name: how to load it}`` ----------
    def provision_fits(self, record, function_id):
        """Whether ``record`` (a card of one of :attr:`families`) can be given the function ``function_id``."""
        return True

    def provision_cards(self, count):
        """How many cards a device profile's group of ``count`` units takes."""
        return 1

    def provision_action(self, fn, count):
        """What a provisioning action adds for the function ``fn`` (its ``{how}`` with ``id``) and ``count``."""
        return {}


class PassthroughKind(Kind):
    """The device as it is, passed to guests whole; only the kernel driver it is bound to can be declared (nothing
    binds it: the converge reports such a card ``unsupported`` when it differs)."""

    name = "passthrough"
    keys = ("driver",)

    def validate(self, c, raw):
        p = c.mapping(raw if raw is not None else {}, "passthrough", self.keys)
        return {"driver": c.string(p.get("driver"), "passthrough.driver", DRIVER_NAME_RE, "a kernel driver name")}

    def carries(self, entry, card, by_addr):
        drv = entry["passthrough"]["driver"]
        return drv is None or card.get("driver") == drv


PASSTHROUGH_KIND = PassthroughKind()


# -- shared helpers ----------------------------------------------------------------------------------
def all_f(value):
    """True for an all-'f' identifier (what FPGA sysfs shows for a broken region/AFU)."""
    if not value:
        return False
    return bool(_ALL_F.match(value.replace("-", "").strip()))


def function_record(fid, name, trait):
    if fid is None and name is None:
        return None
    return {"id": fid, "name": name, "trait": trait}


def listdir_real(path):
    try:
        return sorted(os.listdir(path))
    except (IOError, OSError):
        return []


def read_text(func, real_path, label):
    """Read an attribute below a function's directory; warn on the function when it is unreadable
    (missing files give None silently)."""
    value, err = read_attr_real(real_path)
    if err is not None and err != errno.ENOENT:
        func.warn("%s: %s" % (label, errno_text(err)))
    return value


def read_texts(func, base, names, label=""):
    """Several attributes of one directory (``base`` ending in ``/``) as :func:`read_text` reads each, in one batch
    (:func:`read_attrs_real`: the directory's path is walked once); warnings name ``label`` + the attribute."""
    out = []
    for name, (value, err) in zip(names, read_attrs_real(base, names)):
        if err is not None and err != errno.ENOENT:
            func.warn("%s%s: %s" % (label, name, errno_text(err)))
        out.append(value)
    return out


def walk_dirs(top, max_depth=6):
    """Real (non-symlink) directories below ``top`` as (relative path, name), breadth first, at most
    ``max_depth`` levels deep. Symlinks are never followed, so sysfs loops cannot trap it."""
    out = []
    level = [("", top)]
    for _depth in range(max_depth):
        nxt = []
        for rel, path in level:
            try:
                it = os.scandir(path)
            except (IOError, OSError):
                continue
            try:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            r = e.name if not rel else rel + "/" + e.name
                            out.append((r, e.name))
                            nxt.append((r, e.path))
                    except (IOError, OSError):
                        continue
            finally:
                it.close()
        if not nxt:
            break
        level = nxt
    return out


# what read_mdev reads of each type, in the order of its warnings
_MDEV_TYPE_ATTRS = ("name", "description", "device_api", "available_instances")


def read_mdev(func, ctx):
    """mdev types a parent offers and the mdevs that exist on it.

    Returns ``(types, mdevs)``: types as dicts id/name/description/device_api/available_instances/
    max_instances/mdevs; mdevs as dicts uuid/type/iommu_group."""
    types = []
    ent = func.entries()
    if "mdev_supported_types" in ent:
        tbase = func.real + "/mdev_supported_types"
        for tid in listdir_real(tbase):
            tdir = tbase + "/" + tid
            label = "mdev_supported_types/%s/" % tid
            name, desc, api, avail_text = read_texts(func, tdir + "/", _MDEV_TYPE_ATTRS, label)
            try:
                avail = int(avail_text) if avail_text is not None else None
            except ValueError:
                func.warn("%savailable_instances: unexpected value %r" % (label, avail_text[:40]))
                avail = None
            devices = sorted(d for d in listdir_real(tdir + "/devices") if UUID_RE.match(d))
            m = MAX_INSTANCE_RE.search(desc or "")
            if m:
                max_inst = int(m.group(1))
            elif avail is not None:
                max_inst = avail + len(devices)
            else:
                max_inst = None
            types.append({
                "id": tid,
                "name": name,
                "description": desc,
                "device_api": api,
                "available_instances": avail,
                "max_instances": max_inst,
                "mdevs": devices,
            })
    mdevs = []
    for name in sorted(ent):
        if UUID_RE.match(name):
            t, g = readlinks_real(func.real + "/" + name + "/", ("mdev_type", "iommu_group"))
            group = None
            if g:
                try:
                    group = int(g.rstrip("/").rsplit("/", 1)[-1])
                except ValueError:
                    func.warn("%s/iommu_group: unexpected link target %r" % (name, g[:80]))
            if t is None:
                func.warn("%s: mdev without a readable mdev_type link" % name)
            mdevs.append({
                "uuid": name,
                "type": t.rstrip("/").rsplit("/", 1)[-1] if t else None,
                "iommu_group": group,
            })
    # mdevs listed by a type but not found as children (some trees only have the type's links)
    seen = set(m["uuid"] for m in mdevs)
    for t in types:
        for uuid in t["mdevs"]:
            if uuid not in seen:
                seen.add(uuid)
                mdevs.append({"uuid": uuid, "type": t["id"], "iommu_group": None})
    return types, mdevs


def mdev_units(func, mdevs):
    return [{"kind": "mdev", "id": m["uuid"], "address": func.address, "type": m["type"],
             "iommu_group": m["iommu_group"]} for m in mdevs]
