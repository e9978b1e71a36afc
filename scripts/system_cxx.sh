# Sourced by the device scripts before they build the extension (gpu_check.sh,
# benchmarks/tune/ab_csrc_session.sh): the system g++ as the host compiler.
# The device images put a second g++ (/opt/gcc) first on PATH. Extensions it
# links carry parts of a static libstdc++ that, under Python's
# -Bsymbolic-functions link flags, crash the process at the first integer
# formatted into an error message: SIGSEGV in std::ostream::_M_insert<long>
# (H200, 2026-11-29), and on an H100 on 2026-12-06 every TORCH_CHECK whose
# message held a shape (ab_csrc_session.sh built without this), while messages
# of names alone (a dtype's TypeError) came through. The system compiler links
# the libstdc++.so that torch itself uses. MEMOPT_KEEP_CXX=1 keeps PATH's.
if [ -z "${MEMOPT_KEEP_CXX:-}" ] && [ -x /usr/bin/g++ ]; then
  export CXX=/usr/bin/g++ CC=/usr/bin/gcc
fi
