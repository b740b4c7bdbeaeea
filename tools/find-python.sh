#!/usr/bin/env bash
# Print the real path of a Python interpreter, never a pyenv shim (ansible-test cannot use shims).
# Usage: find-python.sh [X.Y ...]; without arguments, the newest of 3.13, 3.12, 3.11 found.
set -u
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(3.13 3.12 3.11)
pyenv_root=$(pyenv root 2>/dev/null || true)
for v in "${versions[@]}"; do
  if [ -n "$pyenv_root" ]; then
    for p in "$pyenv_root"/versions/"$v".*/bin/python"$v"; do
      [ -x "$p" ] && { echo "$p"; exit 0; }
    done
  fi
  for p in /usr/local/bin/python"$v" /usr/bin/python"$v"; do
    [ -x "$p" ] && { echo "$p"; exit 0; }
  done
done
exit 1
