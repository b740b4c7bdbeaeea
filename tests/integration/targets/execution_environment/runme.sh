#!/usr/bin/env bash
# Copyright (c) 2026, accelops.lifecycle contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
# The collection where AWX and Ansible Automation Platform run it (docs/awx.md):
#   builder: ansible-builder makes the build context of an execution environment with the collection
#            (files/execution-environment.yml, the collection from its tarball), and the context's own steps,
#            run here without a container engine (the galaxy stage's collection install, the builder stage's
#            introspect.py), find the collection's Python and system requirements through its
#            meta/execution-environment.yml; bindep selects the runtime packages, not the test ones.
#   runner:  playbooks/converge.yml converges two FUSE-mounted simulated hosts against a real Placement through
#            ansible-runner, the engine AWX runs jobs with: a private data directory (project/, inventory/, env/),
#            `ansible-runner run` for the converge, then a no-op rerun the way AWX runs a job on an execution
#            node (`ansible-runner transmit | ansible-runner worker | ansible-runner process`). check_events.py
#            checks each job's status, rc and event stream (artifacts/<ident>/job_events); check.yml reads the
#            hosts and Placement back after the converge.
set -eux -o pipefail
# ansible-test runs this from a copy of the target; the collection is where it points ANSIBLE_COLLECTIONS_PATH
coll="${ANSIBLE_COLLECTIONS_PATH%%:*}/ansible_collections/accelops/lifecycle"
[ -f "${coll}/galaxy.yml" ]
py=${ANSIBLE_TEST_PYTHON_INTERPRETER:-python}

# -- builder ----------------------------------------------------------------------------------------------------
ee="${OUTPUT_DIR}/ee"
mkdir -p "${ee}/dist"
cp files/execution-environment.yml files/requirements.yml "${ee}/"
ansible-galaxy collection build "${coll}" --output-path "${ee}/dist"
cp "${ee}"/dist/accelops-lifecycle-*.tar.gz "${ee}/accelops-lifecycle.tar.gz"
ansible-builder create -f "${ee}/execution-environment.yml" -c "${ee}/context" --output-filename Containerfile
ctx="${ee}/context"
cf="${ctx}/Containerfile"
cmp "${ee}/accelops-lifecycle.tar.gz" "${ctx}/_build/collections/accelops-lifecycle.tar.gz"
cmp files/requirements.yml "${ctx}/_build/requirements.yml"
# The stages whose steps are repeated below run these commands (a newer ansible-builder may change them: then
# this test must follow).
# shellcheck disable=SC2016  # the Containerfile's own text, with its build arguments
grep -Fx 'RUN ANSIBLE_GALAXY_DISABLE_GPG_VERIFY=1 ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml --collections-path "/usr/share/ansible/collections"' "${cf}"
# shellcheck disable=SC2016
grep -Fx 'RUN $PYCMD /output/scripts/introspect.py introspect --write-bindep=/tmp/src/bindep.txt --write-pip=/tmp/src/requirements.txt' "${cf}"
grep -Fx 'RUN /output/scripts/install-from-bindep && rm -rf /output/wheels' "${cf}"
# galaxy stage (working directory /build, the context's _build; in the image, only /usr/share/ansible/collections
# is there to look in)
(cd "${ctx}/_build" && ANSIBLE_COLLECTIONS_PATH="${ee}/share/collections" \
  ANSIBLE_GALAXY_DISABLE_GPG_VERIFY=1 ansible-galaxy collection install -r requirements.yml --collections-path "${ee}/share/collections")
[ -f "${ee}/share/collections/ansible_collections/accelops/lifecycle/meta/execution-environment.yml" ]
# builder stage (introspect.py's default folder is /usr/share/ansible/collections: ${ee}/share/collections here)
mkdir -p "${ee}/src"
"${py}" "${ctx}/_build/scripts/introspect.py" introspect --write-bindep="${ee}/src/bindep.txt" \
  --write-pip="${ee}/src/requirements.txt" "${ee}/share/collections"
cat "${ee}/src/requirements.txt" "${ee}/src/bindep.txt"
# every requirement of the collection, each attributed to it
while IFS= read -r req; do
  grep -Fx "${req}  # from collection accelops.lifecycle" "${ee}/src/requirements.txt"
done < <(grep -Ev '^(#|$)' "${coll}/requirements.txt")
grep -Fx 'openstacksdk>=1.0.0  # from collection accelops.lifecycle' "${ee}/src/requirements.txt"
grep -Fx 'pciutils [platform:dpkg platform:rpm]  # from collection accelops.lifecycle' "${ee}/src/bindep.txt"
# what the final stage's install-from-bindep installs (bindep without the test profile), as bindep selects it on
# this machine's platform: pciutils and the PCI names, not FUSE or shellcheck
bindep -l newline -f "${ee}/src/bindep.txt" | sort >"${ee}/runtime-packages.txt"
cat "${ee}/runtime-packages.txt"
profiles=$(bindep --profiles -f "${ee}/src/bindep.txt")
case "${profiles}" in
  *platform:dpkg*) want="pci.ids pciutils " ;;
  *platform:rpm*) want="hwdata pciutils " ;;
  *) echo "neither a dpkg nor an rpm platform: ${profiles}"; exit 1 ;;
esac
[ "$(tr '\n' ' ' <"${ee}/runtime-packages.txt")" = "${want}" ]

# -- runner -----------------------------------------------------------------------------------------------------
common=(-e @../../integration_config.yml -e "output_dir=${OUTPUT_DIR}")
# (the teardown unmounts whatever the setup mounted, also when the setup fails half-way)
trap 'ansible-playbook teardown.yml -i "${INVENTORY_PATH}" "${common[@]}"' EXIT
ansible-playbook setup.yml -i "${INVENTORY_PATH}" "${common[@]}"
pdd="${OUTPUT_DIR}/runner"

# the converge, as `ansible-runner run` (exit status: the playbook's)
ansible-runner run "${pdd}" -p converge.yml --ident converge
"${py}" check_events.py "${pdd}" converge converge ee-a ee-b
ansible-playbook check.yml -i "${INVENTORY_PATH}" "${common[@]}"

# the no-op rerun, streamed as between AWX's control node and an execution node (receptor carries the streams)
ansible-runner transmit "${pdd}" -p converge.yml --ident noop |
  ansible-runner worker --private-data-dir "${OUTPUT_DIR}/worker" |
  ansible-runner process "${pdd}" --ident noop
# (its events show that nothing changed on the hosts or in Placement: no read-back needed)
"${py}" check_events.py "${pdd}" noop noop ee-a ee-b
