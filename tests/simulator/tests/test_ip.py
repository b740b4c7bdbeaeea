"""The ip fake: ``ip -j link show dev PF`` (vfinfo_list) and ``ip link set dev PF vf N mac|vlan|trust``, backed by
the simulated kernel (the VF's netdev takes the MAC; VF settings go with the VFs and with a reboot)."""

import json
import os
import subprocess

PF = "0000:d8:00.0"
NETDEV = "enp216s0f0"


def ip(h, *args):
    return h.tool("ip", *args)


def vfinfo(h, *opts):
    rc, out, err = ip(h, *(list(opts) + ["-j", "link", "show", "dev", NETDEV]))
    assert rc == 0, err
    links = json.loads(out)
    assert [x["ifname"] for x in links] == [NETDEV]
    return links[0].get("vfinfo_list", [])


def test_show_and_set(tree):
    h = tree("nic-sriov")
    assert vfinfo(h) == []
    with h.transaction() as host:
        host.set_numvfs(PF, "3")
    info = vfinfo(h)
    assert [v["vf"] for v in info] == [0, 1, 2]
    assert info[0]["address"] == "00:00:00:00:00:00" and info[0]["trust"] is False and info[0]["spoofchk"] is True
    assert "vlan_list" not in info[0]
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "1", "mac", "52:54:00:AA:00:01") == (0, "", "")
    assert ip(h, "link", "set", NETDEV, "vf", "1", "vlan", "100", "qos", "3", "trust", "on") == (0, "", "")
    info = vfinfo(h, "-d")
    assert info[1]["address"] == "52:54:00:aa:00:01" and info[1]["vlan_list"] == [{"vlan": 100, "qos": 3}]
    assert info[1]["trust"] is True and info[0]["address"] == "00:00:00:00:00:00"
    # the VF's own netdev has the MAC, in the tree
    with open(os.path.join(h.root, "sys/class/net", NETDEV + "v1", "address"), encoding="utf-8") as f:
        assert f.read() == "52:54:00:aa:00:01\n"
    # vlan 0 clears the VLAN (and its qos)
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "1", "vlan", "0")[0] == 0
    assert "vlan_list" not in vfinfo(h)[1]
    # plain text, as iproute2 prints it
    rc, out, _err = ip(h, "link", "show", NETDEV)
    assert rc == 0 and out.splitlines()[0].startswith("2: %s: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500" % NETDEV)
    assert "    vf 1     link/ether 52:54:00:aa:00:01 brd ff:ff:ff:ff:ff:ff, spoof checking on, link-state auto, trust on" in out


def test_kernel_and_argument_errors(tree):
    h = tree("nic-sriov")
    with h.transaction() as host:
        host.set_numvfs(PF, "2")
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "2", "mac", "52:54:00:00:00:01") == (2, "", "RTNETLINK answers: Invalid argument\n")
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "0", "mac", "01:00:5e:00:00:01")[0] == 2      # multicast
    assert ip(h, "link", "set", "dev", "nosuch0", "vf", "0", "trust", "on") == (1, "", 'Cannot find device "nosuch0"\n')
    rc, _out, err = ip(h, "link", "set", "dev", NETDEV, "vf", "0", "vlan", "5000")
    assert rc == 255 and err == 'Error: argument "5000" is wrong: Invalid "vlan" value\n'
    rc, _out, err = ip(h, "link", "set", "dev", NETDEV, "vf", "0", "trust", "maybe")
    assert rc == 255 and "Invalid \"trust\" value" in err
    rc, _out, err = ip(h, "link", "set", "dev", NETDEV + "v0", "vf", "0", "trust", "on")   # a VF's netdev
    assert (rc, err) == (2, "RTNETLINK answers: Operation not supported\n")
    # settings before a refused one in the same command stay (as the kernel's do_setvfinfo)
    rc, _out, _err = ip(h, "link", "set", "dev", NETDEV, "vf", "0", "trust", "on", "vf", "9", "trust", "on")
    assert rc == 2 and vfinfo(h)[0]["trust"] is True
    assert ip(h, "-j", "link", "show", "dev", "nosuch0") == (1, "", 'Device "nosuch0" does not exist.\n')


def test_settings_go_with_the_vfs_and_the_reboot(tree):
    h = tree("nic-sriov")
    with h.transaction() as host:
        host.set_numvfs(PF, "2")
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "0", "mac", "52:54:00:00:00:07")[0] == 0
    with h.transaction() as host:
        host.set_numvfs(PF, "0")
        host.set_numvfs(PF, "2")
    assert vfinfo(h)[0]["address"] == "00:00:00:00:00:00"
    assert ip(h, "link", "set", "dev", NETDEV, "vf", "0", "trust", "on")[0] == 0
    h.reboot()
    assert vfinfo(h) == []


def test_wrapper_in_usr_sbin(tree):
    h = tree("nic-sriov")
    p = subprocess.run([os.path.join(h.root, "usr/sbin/ip"), "-j", "link", "show"], capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    assert [x["ifname"] for x in json.loads(p.stdout)] == ["enp216s0f0", "enp216s0f1"]
