# Stand-in for the pip bootstrap script that ansible-test downloads from a host this network cannot reach.
# ansible-test runs it inside a fresh virtual environment with pip's install arguments; we bootstrap pip
# from the interpreter's own ensurepip, then install what was asked from the package index.
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--default-pip"])
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + args))
