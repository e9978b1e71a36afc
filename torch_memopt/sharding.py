"""DTensor sharding rules for every memopt op, so that a model parallelized with
``torch.distributed.tensor.parallel.parallelize_module`` can run memopt (issue 19).

Each rule lists the placements under which the op runs on the local shards unchanged
and what the output is then; DTensor picks the cheapest, redistributing the inputs to
it when they match none (so a call never fails for its placements: at worst everything
is replicated first).

- linear (``input @ weight.T + bias``, then the activation): replicated; colwise
  (weight ``Shard(0)``, bias with it, output ``Shard(-1)``); rowwise (input
  ``Shard(-1)``, weight ``Shard(1)``, output ``Partial``: only with no activation,
  and the bias as ``Partial`` too, so that the reduction adds it once); tokens
  (input sharded on a leading dim, weight replicated).
- gemm (``a @ b``): replicated; a's rows; b's columns; K (``Partial``).
- layer_norm, rms_norm, add_layer_norm, add_rms_norm: sharded on any leading (token)
  dim, replicated on the normalized ones; weight and bias replicated. The fused adds'
  two outputs (normalized, sum) share the input's placement.
- softmax: sharded on any dim but ``dim``.

Registered through ``torch.distributed.tensor.experimental.register_sharding`` (public)
when this module is imported (``torch_memopt`` imports it where torch.distributed is
available). One more step there reaches into DTensor: register_sharding keys its cache
on the tensors' specs and the int arguments only, so linear's ``activation`` (a string,
which decides whether rowwise is allowed) and the norms' ``normalized_shape`` (a list)
would not re-run the rule when they change; ``_key_on`` adds them to the key. Where
that internal is missing, linear leaves rowwise out (DTensor then gathers instead) and
the norms shard only dims before the last ``len(normalized_shape)``, which is safe
for any shape.
"""
from __future__ import annotations

import warnings
from typing import Optional, Sequence

import torch
from torch.distributed.tensor import DTensor, Partial, Replicate, Shard
from torch.distributed.tensor.experimental import register_sharding

memopt = torch.ops.memopt

# Whether the sharding cache keys on the arguments that change a rule (see the module
# docstring); set by _key_on.
_KEYED: dict[object, bool] = {}


def _key_on(op, static_argnum: int, static_kwargs: Optional[list[str]] = None) -> None:
    """Makes DTensor's sharding cache key on ``op``'s arguments from ``static_argnum``
    on and on ``static_kwargs`` (register_sharding keys on int arguments only)."""
    try:
        from torch.distributed.tensor._op_schema import RuntimeSchemaInfo

        propagator = DTensor._op_dispatcher.sharding_propagator
        propagator.op_to_schema_info[op] = RuntimeSchemaInfo(
            static_argnum, static_kwargs, needs_pytree=True)
        _KEYED[op] = True
    except (ImportError, AttributeError, TypeError):
        _KEYED[op] = False


_WARNED: set = set()


def _warn_if_redistributed(op_name: str, args: Sequence, rules: list) -> list:
    """``rules``, after a one-time warning (per op and placements) when the tensors'
    placements match none of them on some mesh dim: DTensor then redistributes them,
    which costs communication the caller may not expect."""
    specs = [a if hasattr(a, "placements") else None for a in args]
    mesh_dims = max((len(sp.placements) for sp in specs if sp is not None), default=0)
    for mesh_dim in range(mesh_dims):
        given = tuple(sp.placements[mesh_dim] if sp is not None else None for sp in specs)
        if all(tuple(inputs) != given for _, inputs in rules):
            key = (op_name, given)
            if key not in _WARNED:
                _WARNED.add(key)
                warnings.warn(f"memopt.{op_name}: no sharding rule takes placements {given} "
                              f"on mesh dim {mesh_dim}; DTensor redistributes them to one "
                              "that does (torch_memopt/sharding.py lists them)", stacklevel=2)
    return rules


def _placements(args: Sequence, by_index: dict[int, object]) -> list:
    """One entry an argument as passed: the placement of the tensor arguments named in
    ``by_index`` (an absent optional tensor stays None), None for everything else."""
    return [by_index.get(i) if args[i] is not None else None for i in range(len(args))]


# --- linear and gemm ---------------------------------------------------------------------

def _linear_rule(*args, **kwargs):
    input, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    last = input.ndim - 1
    rules = [([Replicate()], _placements(args, {0: Replicate(), 1: Replicate(), 2: Replicate()})),
             # colwise: each rank its output columns (weight rows) and their bias
             ([Shard(last)], _placements(args, {0: Replicate(), 1: Shard(0), 2: Shard(0)}))]
    for dim in range(last):  # tokens: each rank its rows of the input
        rules.append(([Shard(dim)], _placements(args, {0: Shard(dim), 1: Replicate(),
                                                       2: Replicate()})))
    activation = kwargs.get("activation", "none")
    if activation == "none" and _KEYED.get(memopt.linear.default, False):
        # rowwise: partial sums over K; a partial bias (1/ranks of it each) sums to one
        rules.append(([Partial()], _placements(args, {0: Shard(last), 1: Shard(1),
                                                      2: Partial() if bias is not None
                                                      else None})))
    return rules


def _gemm_rule(*args, **kwargs):
    return [([Replicate()], _placements(args, {0: Replicate(), 1: Replicate()})),
            ([Shard(0)], _placements(args, {0: Shard(0), 1: Replicate()})),
            ([Shard(1)], _placements(args, {0: Replicate(), 1: Shard(1)})),
            ([Partial()], _placements(args, {0: Shard(1), 1: Shard(0)}))]


# --- norms, fused add + norms, softmax ----------------------------------------------------

def _norm_rules(args, tensor_indices: Sequence[int], param_indices: Sequence[int], outputs: int):
    """Replicated, or the input (and residual) and every output sharded alike on one dim
    before the normalized ones (``normalized_shape`` follows the row tensors)."""
    input, normalized_shape = args[0], args[tensor_indices[-1] + 1]
    every = {i: Replicate() for i in (*tensor_indices, *param_indices)}
    rules = [([Replicate()] * outputs, _placements(args, every))]
    for dim in range(input.ndim - len(normalized_shape)):
        placed = {i: Shard(dim) for i in tensor_indices}
        placed.update({i: Replicate() for i in param_indices})
        rules.append(([Shard(dim)] * outputs, _placements(args, placed)))
    return rules


def _layer_norm_rule(*args, **kwargs):
    # (input, normalized_shape, weight, bias, eps)
    return _norm_rules(args, (0,), (2, 3), 1)


def _rms_norm_rule(*args, **kwargs):
    # (input, normalized_shape, weight, eps)
    return _norm_rules(args, (0,), (2,), 1)


def _add_layer_norm_rule(*args, **kwargs):
    # (input, residual, normalized_shape, weight, bias, eps) -> (normalized, sum)
    return _norm_rules(args, (0, 1), (3, 4), 2)


def _add_rms_norm_rule(*args, **kwargs):
    # (input, residual, normalized_shape, weight, eps) -> (normalized, sum)
    return _norm_rules(args, (0, 1), (3,), 2)


def _softmax_rule(*args, **kwargs):
    input = args[0]
    dim = args[1] if len(args) > 1 else kwargs.get("dim", -1)
    dim = dim % input.ndim
    rules = [([Replicate()], _placements(args, {0: Replicate()}))]
    for d in range(input.ndim):
        if d != dim:
            rules.append(([Shard(d)], _placements(args, {0: Shard(d)})))
    return rules


def _warning(op_name: str, rule):
    def checked(*args, **kwargs):
        return _warn_if_redistributed(op_name, args, rule(*args, **kwargs))
    return checked


def _register() -> None:
    rules = [
        (memopt.linear.default, _linear_rule, 3, ["activation"]),
        (memopt.gemm.default, _gemm_rule, 100, None),
        # normalized_shape (arg 1, or 2 for the fused adds) onward
        (memopt.layer_norm.default, _layer_norm_rule, 1, None),
        (memopt.rms_norm.default, _rms_norm_rule, 1, None),
        (memopt.add_layer_norm.default, _add_layer_norm_rule, 2, None),
        (memopt.add_rms_norm.default, _add_rms_norm_rule, 2, None),
        (memopt.softmax.default, _softmax_rule, 1, None),
    ]
    for op, rule, static_argnum, static_kwargs in rules:
        register_sharding(op)(_warning(op._schema.name.split("::")[-1], rule))
        _key_on(op, static_argnum, static_kwargs)


_register()
