#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The collection's documentation site, built with antsibull-docs and Sphinx into .build/docs-site/
# (open .build/docs-site/html/index.html): a page for every module, filter and role argument spec, the collection
# index, and the Markdown guides (README.md, docs/*.md) as the collection's extra docs, rendered by
# tools/docs_site.py. Exits non-zero on any error or warning (antsibull-docs --fail-on-error, sphinx-build -W, and
# any "warning" in the log), and when a module, filter, role or guide has no page on the site.
# DOCS_SITE_OUT=DIR builds into DIR instead (a gate run builds into its own directory). Needs .venv (make setup).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
export PATH="$top/.venv/bin:$PATH"
out=${DOCS_SITE_OUT:-$top/.build/docs-site}
coll_name=accelops.lifecycle
fail() { echo "docs-site: $*" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out" || fail "cannot make $out"
out=$(cd "$out" && pwd) || exit 1
log="$out/build.log"
# the collection as ansible-doc finds it, plus its guides as extra docs (generated in the staged copy only)
coll=$(tools/stage.sh "$out/collections") || fail "staging failed"
export ANSIBLE_COLLECTIONS_PATH="$out/collections"
python tools/docs_site.py guides "$coll" >"$log" 2>&1 || { cat "$log"; fail "the guides could not be converted"; }
# the Sphinx project of antsibull-docs' template (antsibull-docs wants its directories writable by the owner only)
mkdir -m 0700 "$out/src"
antsibull-docs sphinx-init --use-current --fail-on-error --dest-dir "$out/src" --project "$coll_name" \
  --copyright "accelops.lifecycle contributors" --title "accelops.lifecycle" "$coll_name" >>"$log" 2>&1 ||
  { cat "$log"; fail "antsibull-docs sphinx-init failed"; }
# This machine cannot fetch docs.ansible.com's intersphinx inventory: a stand-in with the labels antsibull-docs'
# pages use, so that they resolve to the real pages; no other inventories (nothing else is referred to).
python tools/docs_site.py inventory "$out/src/ansible_devel.inv" || fail "no intersphinx inventory"
cat >>"$out/src/conf.py" <<PY

# tools/docs-site.sh: offline intersphinx (a stand-in inventory of docs.ansible.com's labels)
intersphinx_mapping = {
    'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '$out/src/ansible_devel.inv'),
}
PY
# antsibull-docs collection --fail-on-error, then sphinx-build -W --keep-going (the template's build.sh)
start=$SECONDS
(cd "$out/src" && ./build.sh) >>"$log" 2>&1 || { cat "$log"; fail "the build failed (log: $log)"; }
# (Sphinx's and antsibull-docs' WARNING/ERROR lines, tools/docs_site.py's WARNING lines, Python's *Warning: lines)
if grep -En 'WARNING|ERROR|[A-Za-z]*Warning:|[Ee]rror:' "$log"; then
  fail "the build printed the warnings or errors above (log: $log)"
fi
html="$out/src/build/html"
ln -sfn "src/build/html" "$out/html"

# every plugin and role ansible-doc knows has its page, and every guide its page, linked from the collection index
pages="$html/collections/accelops/lifecycle"
missing=""
for kind in module filter role; do
  names=$(ansible-doc -t "$kind" -l "$coll_name" --json | python -c 'import json, sys; print("\n".join(json.load(sys.stdin)))') ||
    fail "ansible-doc -t $kind -l failed"
  [ -n "$names" ] || fail "ansible-doc lists no $kind of $coll_name"
  for fqcn in $names; do
    [ -f "$pages/${fqcn##*.}_$kind.html" ] || missing="$missing ${fqcn}($kind)"
  done
done
while read -r name; do
  [ -f "$pages/docsite/$name.html" ] || missing="$missing docsite/$name"
  grep -q "href=\"docsite/$name.html\"" "$pages/index.html" || missing="$missing docsite/$name(not linked from the index)"
done < <(sed -n 's/^  - //p' "$coll/docs/docsite/extra-docs.yml")
[ -z "$missing" ] || fail "no page for:$missing"
echo "docs-site: built in $((SECONDS - start)) s, no warnings: $out/html/index.html"
