"""Tools for checking torch_memopt: a seeded differential fuzzer over every op and
variant, ``python -m torch_memopt.testing.fuzz`` or
``torch_memopt.testing.fuzz.run_fuzz`` (not imported here, so that ``-m`` runs the
module fresh)."""
