# Sourced by the device scripts (gpu_check.sh, benchmarks/tune/ab_csrc_session.sh) and
# by the builds made for them here (scripts/prebuild_for_device.sh,
# benchmarks/tune/ab_prebuild.sh).

# sources_hash [DIR]: the hash of DIR's (default .) csrc/ and setup.py that a build is
# known by: the device copy refreshes every file's mtime on each call, so mtimes cannot
# tell a stale build. C collation, so both machines list the files in one order.
sources_hash() {
  (cd "${1:-.}" && find csrc setup.py -type f | LC_ALL=C sort | xargs sha1sum | sha1sum |
     cut -d' ' -f1)
}

# pack_for OUTDIR [TREE]: the packed extension in OUTDIR (prebuild_for_device.sh's),
# printed only where it was built from TREE's (default .) very sources; fails otherwise.
pack_for() {
  local pack
  pack=$(ls "$1"/_C*.so.xz 2>/dev/null | head -1)
  [ -n "$pack" ] && [ "$(cat "$1/sources_hash" 2>/dev/null)" = "$(sources_hash "${2:-.}")" ] &&
    echo "$pack"
}

# assemble_base_tree DEST [PATH ...]: an A/B's baseline as the device builds it, the
# working tree's setup.py and Python (and the PATHs named) beside the baseline's
# csrc/ from .devrun/base_csrc.tgz, with no extension. ab_csrc_session.sh builds it
# there and ab_prebuild.sh here: the two must hash alike.
assemble_base_tree() {
  local dest=$1
  shift
  cp -r setup.py pyproject.toml README.md torch_memopt "$@" "$dest"/
  rm -f "$dest"/torch_memopt/_C*.so
  tar xzf .devrun/base_csrc.tgz -C "$dest"
}

# unpack_xz PACK FILE: Python's lzma, not the xz tool, which a device image may lack.
unpack_xz() {
  "${PYTHON:-python3}" -c "import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], 'wb') as dst:
    shutil.copyfileobj(src, dst)" "$1" "$2"
}

# use_prebuilt PACK PACKAGE_DIR unpacks an extension built on the CPU machine
# (prebuild_for_device.sh: _C.<abi>.so.xz) into PACKAGE_DIR, and puts the tree above
# PACKAGE_DIR on the device Python's import path with a .pth file, as the editable
# install would (scripts run as `python3 benchmarks/tune/x.py` find torch_memopt
# there). Fails, leaving no extension behind, where the pack is damaged.
use_prebuilt() {
  local pack=$1 package=$2 so tree site
  so="$package/$(basename "$pack" .xz)"
  unpack_xz "$pack" "$so" || { rm -f "$so"; return 1; }
  tree=$(cd "$package/.." && pwd)
  site=$("${PYTHON:-python3}" -c "import site; print(site.getsitepackages()[0])") || return 1
  echo "$tree" > "$site/memopt_tree.pth"
}
