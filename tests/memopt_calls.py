"""Counting the memopt ops a block of code calls: the modules, optimize_ and enable()
go through ``torch_memopt.ops.<op>``, which ``count_memopt_calls`` wraps for the
block, so a test can tell "memopt ran" from "the stock op gave the same answer"."""

import collections
import contextlib

from torch_memopt import ops

COUNTED = ("gemm", "linear", "layer_norm", "rms_norm", "softmax", "add_layer_norm", "add_rms_norm")


@contextlib.contextmanager
def count_memopt_calls():
    """Yields a Counter of op name -> calls made inside the block."""
    calls = collections.Counter()
    originals = {name: getattr(ops, name) for name in COUNTED}

    def counting(name, fn):
        def wrapper(*args, **kwargs):
            calls[name] += 1
            return fn(*args, **kwargs)
        return wrapper

    try:
        for name, fn in originals.items():
            setattr(ops, name, counting(name, fn))
        yield calls
    finally:
        for name, fn in originals.items():
            setattr(ops, name, fn)
