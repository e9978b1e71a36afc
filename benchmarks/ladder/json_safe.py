"""The benchmarks' name for torch_memopt._json_safe.json_safe, which the probe's JSON
uses too: one implementation of "every non-finite float becomes None"."""
from torch_memopt._json_safe import json_safe

__all__ = ["json_safe"]
