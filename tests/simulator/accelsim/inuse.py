"""Mark units in use the way the real world does: a running libvirt domain whose live XML (under
/run/libvirt/qemu) assigns the device, or a process holding the device's /dev/vfio/<group> (or an FPGA
port node) open, visible as a /proc/<pid>/fd/<n> symlink."""

from .kernel import domain_xml
from .model import BDF_RE


def _store_of(where):
    from .render import SimHost
    from .store import find_store
    if isinstance(where, SimHost):
        return where.store
    return find_store(root=where)


def mark_in_use(where, unit, by="domain", name=None):
    """Mark ``unit`` (a PCI address, an mdev uuid, or a host path such as /dev/dfl-port.0 for
    ``by='process'``) in use on the host ``where`` (a handle or a root path).

    ``by='domain'`` writes run/libvirt/qemu/<name>.xml with a <hostdev> for the unit and returns the
    domain name; ``by='process'`` adds a process whose fd links to the unit's /dev/vfio/<group> and
    returns its pid (as a string)."""
    store = _store_of(where)
    with store.transaction() as host:
        if by == "domain":
            name = name or "instance-%08x" % (len(host.state["domains"]) + 1)
            hostdev = {"pci": unit} if BDF_RE.match(unit) else {"mdev": unit}
            host.add_domain(name, domain_xml(name, [hostdev]))
            return name
        if by == "process":
            target = unit if unit.startswith("/dev/") else "/dev/vfio/%d" % host.group_of(unit)
            return str(host.add_process(name or "qemu-system-x86", [target]))
        raise ValueError("by must be 'domain' or 'process'")


def release(where, name):
    """Stop the domain or process ``name`` (as returned by mark_in_use)."""
    store = _store_of(where)
    with store.transaction() as host:
        if str(name) in host.state["processes"]:
            host.remove_process(name)
        else:
            host.remove_domain(name)
