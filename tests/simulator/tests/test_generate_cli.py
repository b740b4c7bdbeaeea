"""The synthetic host generator and the command line."""

import os
import subprocess
import sys

from accelsim.generate import synthetic_lab
from accelsim.kernel import Host, new_state

from .helpers import read

SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cli(*args, env=None):
    full = dict(os.environ, PYTHONPATH=SIM)
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "accelsim"] + list(args), capture_output=True, text=True, env=full, check=False)


def test_generate_defaults_make_thousands_of_functions():
    # counted on the in-memory model (rendering 75,000 files is a benchmark's job, not a unit test's)
    lab, enable = synthetic_lab(pfs=16, vfs=128, gpus=8, fpgas=8)
    host = Host(new_state(lab))
    for pf, n in enable.items():
        host.set_numvfs(pf, str(n))
    assert len(host.bdfs()) >= 2500
    assert len([b for b in host.bdfs() if host.static(b)["device"] == 0x1889]) == 16 * 128


def test_generated_host_is_readable_by_lspci(tmp_path):
    dest = str(tmp_path / "big")
    p = cli("generate", "--pfs", "4", "--vfs", "32", "--gpus", "2", "--fpgas", "2", "--qats", "2", dest)
    assert p.returncode == 0, p.stderr
    count = int(p.stdout.split("with ")[1].split()[0])
    assert count == 2 + 10 + 4 * 33 + 2 * 33 + 2 * 2 + 2 * 17
    out = subprocess.run(["lspci", "-D", "-vmm", "-nn", "-A", "linux-sysfs", "-O", "sysfs.path=%s/sys/bus/pci" % dest],
                         capture_output=True, text=True, check=True).stdout
    assert out.count("Slot:\t") == count
    assert out.count("Device:\tEthernet Adaptive Virtual Function [1889]") == 4 * 32
    assert len(os.listdir(os.path.join(dest, "sys/bus/pci/devices"))) == count
    assert read(os.path.join(dest, "sys/bus/pci/devices/0000:10:00.0/sriov_numvfs")) == "32\n"


def test_cli_tree_and_tool(tmp_path):
    dest = str(tmp_path / "t")
    p = cli("tree", "gpu-mdev", dest)
    assert p.returncode == 0, p.stderr
    assert os.path.isdir(os.path.join(dest, "sys/bus/pci/devices/0000:18:00.0/mdev_supported_types"))
    p = cli("tool", "nvidia-smi", "-L", env={"ACCELSIM_ROOT": dest})
    assert p.returncode == 0 and p.stdout.startswith("GPU 0: Tesla T4")
    p = cli("tool", "--root", dest, "mdevctl", "list", "-d")
    assert p.stdout == "4b20d080-1b54-4048-85b3-a6a62d165c01 0000:18:00.0 nvidia-231 auto (active)\n"
    p = cli("reboot", dest)
    assert p.returncode == 0
    p = cli("labs")
    assert "lab-all" in p.stdout and "_platform" not in p.stdout
    p = cli("tool", "--root", str(tmp_path / "nowhere"), "mdevctl", "list")
    assert p.returncode == 1 and "not an accelsim state directory" in p.stderr
