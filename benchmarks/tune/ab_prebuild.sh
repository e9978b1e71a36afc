#!/usr/bin/env bash
# Both builds of an A/B (ab_csrc_session.sh), made here on the CPUs instead of in the
# device call, where they took 145-291 s of it: the baseline (BASE_REV's csrc/ beside the
# working tree's setup.py and Python, as the device assembles it) into .devrun/base_out,
# the working tree into .devbuild/out (scripts/prebuild_for_device.sh). Carry .whl,
# .devrun and .devbuild/out; the device call then compiles nothing.
#   bash benchmarks/tune/ab_prebuild.sh [BASE_REV]      (default HEAD)
# The baseline's tree stays in .devbuild/base_tree with its objects, and only the files
# that differ are rewritten, so a second run with the same BASE_REV recompiles nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/prebuilt.sh
REV=${1:-HEAD}
mkdir -p .devrun .devbuild
git archive "$REV" csrc | gzip > .devrun/base_csrc.tgz
bash scripts/prebuild_for_device.sh .devbuild/out
# The same interpreter for the baseline (the first build made its venv, if it had to).
export DEVICE_PYTHON=${DEVICE_PYTHON:-$PWD/.devbuild/venv/bin/python}
TREE=.devbuild/base_tree
STAGE=.devbuild/base_stage
rm -rf "$STAGE" && mkdir -p "$STAGE" "$TREE"
assemble_base_tree "$STAGE" scripts  # scripts: its prebuild_for_device.sh runs there
# A file whose bytes differ is rewritten (and so is newer than its objects); one that
# does not keeps its time, and ninja its objects. Files the baseline lacks go.
(cd "$STAGE" && find . -type f) | while read -r f; do
  cmp -s "$STAGE/$f" "$TREE/$f" || { mkdir -p "$(dirname "$TREE/$f")"; cp "$STAGE/$f" "$TREE/$f"; }
done
(cd "$TREE" && find . -path ./.devbuild -prune -o -type f -print) | while read -r f; do
  [ -e "$STAGE/$f" ] || rm -f "$TREE/$f"
done
rm -rf "$STAGE"
bash "$TREE/scripts/prebuild_for_device.sh" "$PWD/.devrun/base_out"
du -sh .devbuild/out .devrun/base_out
