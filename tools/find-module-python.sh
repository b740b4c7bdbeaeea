#!/usr/bin/env bash
# Print the Python the modules of the integration targets run on: the platform's own Python 3, where a real host's
# module runs get theirs (ansible-core's interpreter discovery falls back to the same paths), when it is 3.9 or newer
# and can make a virtualenv; else the controller's (tools/find-python.sh). A distribution's Python is built with
# profile-guided optimization, which the pyenv builds are not: a module run takes about a third less CPU on it.
set -u
for p in /usr/bin/python3 /usr/libexec/platform-python; do
  [ -x "$p" ] || continue
  "$p" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null || continue
  "$p" -c 'import os, sys; print(os.path.realpath(sys.executable))'
  exit 0
done
exec "$(dirname "$0")/find-python.sh"
