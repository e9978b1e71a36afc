# Sourced by the device scripts (gpu_check.sh, benchmarks/tune/ab_csrc_session.sh) and
# by scripts/prebuild_for_device.sh.
# sources_hash [DIR]: the hash of DIR's (default .) csrc/ and setup.py that a build is
# known by: the device copy refreshes every file's mtime on each call, so mtimes cannot
# tell a stale build. C collation, so both machines list the files in one order.
sources_hash() {
  (cd "${1:-.}" && find csrc setup.py -type f | LC_ALL=C sort | xargs sha1sum | sha1sum |
     cut -d' ' -f1)
}
# use_prebuilt PACK PACKAGE_DIR unpacks an extension built on the CPU machine
# (scripts/prebuild_for_device.sh: _C.<abi>.so.xz) into PACKAGE_DIR, and puts the
# tree above PACKAGE_DIR on the device Python's import path with a .pth file, as
# the editable install would (scripts run as `python3 benchmarks/tune/x.py` find
# torch_memopt there). Fails, leaving no extension behind, where the pack is
# damaged.
# unpack_xz PACK FILE: Python's lzma, not the xz tool, which a device image may lack.
unpack_xz() {
  "${PYTHON:-python3}" -c "import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], 'wb') as dst:
    shutil.copyfileobj(src, dst)" "$1" "$2"
}
use_prebuilt() {
  local pack=$1 package=$2 so tree site
  so="$package/$(basename "$pack" .xz)"
  unpack_xz "$pack" "$so" || { rm -f "$so"; return 1; }
  tree=$(cd "$package/.." && pwd)
  site=$("${PYTHON:-python3}" -c "import site; print(site.getsitepackages()[0])") || return 1
  echo "$tree" > "$site/memopt_tree.pth"
}
