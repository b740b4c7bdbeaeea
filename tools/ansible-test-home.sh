#!/usr/bin/env bash
# Prepare the state ansible-test keeps under $HOME/.ansible/test before any ansible-test command runs, so that
# a first run on a fresh machine (or with an empty home directory) behaves like every later one:
#   - cache/get_pip_<ver>.py: the pip bootstrap script ansible-test would download from a host this network
#     cannot reach; a stand-in (tools/get_pip_standin.py) that bootstraps pip with ensurepip;
#   - id_rsa, id_rsa.pub: the key pair ansible-test makes on its first integration run. Two ansible-test
#     processes started at once on a home without it both run ssh-keygen, and the second one stops at
#     "Overwrite (y/n)?" and fails: the key is made here, once, under a lock, and moved into place whole.
# Idempotent; safe to run several times at once. Usage: ansible-test-home.sh PYTHON (the controller's python,
# whose ansible-test names the pip version).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
python=${1:?usage: ansible-test-home.sh PYTHON}
dir="$HOME/.ansible/test"
mkdir -p "$dir/cache"

pip_ver=$("$python" - <<'PY'
import os
import re
import ansible_test
src = open(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")).read()
m = re.search(r"pip='([0-9.]+)'", src)
print(m.group(1) if m else "")
PY
)
if [ -z "$pip_ver" ]; then
  echo "ansible-test-home.sh: cannot read the pip version ansible-test bootstraps" >&2
  exit 1
fi
standin="$dir/cache/get_pip_${pip_ver//./_}.py"
cmp -s "$top/tools/get_pip_standin.py" "$standin" 2>/dev/null || {
  cp "$top/tools/get_pip_standin.py" "$standin.$$" && mv -f "$standin.$$" "$standin"
}

# The key pair: the same command ansible-test runs (core_ci.SshKey), with the same rewrite of the PEM header
# it applies for paramiko; ansible-test uses a pair it finds and makes none.
exec 9>"$dir/.accelops-keygen.lock"
flock 9
if [ ! -f "$dir/id_rsa" ] || [ ! -f "$dir/id_rsa.pub" ]; then
  tmp=$(mktemp -d "$dir/.keygen.XXXXXX")
  ssh-keygen -m PEM -q -t rsa -N '' -f "$tmp/id_rsa" </dev/null
  sed -i -E 's/(BEGIN|END) PRIVATE KEY/\1 RSA PRIVATE KEY/' "$tmp/id_rsa"
  # the public half last: a reader that sees both files sees a whole pair
  mv -f "$tmp/id_rsa" "$dir/id_rsa"
  mv -f "$tmp/id_rsa.pub" "$dir/id_rsa.pub"
  rmdir "$tmp"
fi
