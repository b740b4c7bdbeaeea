#!/usr/bin/env bash
# Copy the collection (tracked and untracked-but-not-ignored files) to where ansible-test, ansible-doc,
# ansible-lint and ansible-playbook find it: DEST/ansible_collections/accelops/lifecycle, where DEST is the
# first argument (default .build/collections). The gate runner stages to a directory of its own so that a
# demo or a developer re-staging cannot pull the tree from under a running gate.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$top/.build/collections}
coll="$dest/ansible_collections/accelops/lifecycle"
rm -rf "$coll"
mkdir -p "$coll"
cd "$top"
# (files deleted in the work tree but still tracked are skipped quietly)
git ls-files -co --exclude-standard -z | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$coll"
# ansible-test wants to be run inside a git-free tree or a git repo of its own: give it a repo so it can
# list files the way it does in a checkout.
(
  cd "$coll"
  git init -q
  git add -A
  git -c user.name=stage -c user.email=stage@localhost commit -qm stage
) >/dev/null 2>&1
echo "$coll"
