"""Buffer forwarding: run an elementwise op in place when its input buffer is dead.

For every node of a partition program, :func:`forward_buffers` checks whether one input
can be overwritten by the op's result:

1. the op has an in-place variant for that operand (``flowmesh/kernels/inplace.py``);
2. the input is produced inside the same program by a kernel that always returns a new,
   unaliased tensor (so it is not a variable's storage, a feed, a constant or a view);
3. this node is its only reader (one use in the whole program) and it is not fetched;
4. the result has the input's dtype (floating point) and, statically, the input's shape:
   the other operand broadcasts *into* the input (every aligned dimension is 1 or equal).

Such nodes get the in-place kernel; everything else is unchanged. Because the value has
no other reader and was allocated for this step only, no one can observe the difference,
except that the step allocates less.

Collective kernels that can take their inputs over (``kernel.donating(mask)``, all-reduce
and broadcast) get a variant told which inputs meet conditions 2 and 3: the engine then
reduces such a tensor in place instead of copying it into a buffer first.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from flowmesh.kernels.inplace import BINARY, FLOATING, FRESH_OUTPUT, UNARY, inplace_variant


def forward_buffers(nodes: Sequence[Any], feed_keys: Sequence[Hashable],
                    fetch_keys: Sequence[Hashable],
                    shared: Iterable[Hashable] = ()) -> list[Any]:
    """Returns ``nodes`` with in-place kernels where forwarding is provably safe.

    Args:
        nodes: the program's ExecNodes in execution order (not modified).
        feed_keys: values fed into the program (never overwritten).
        fetch_keys: values the program returns (never overwritten).
        shared: further values that outlive a step, e.g. memoized results (never
            overwritten).

    Returns:
        A new list; nodes that were changed are copies with ``fn`` replaced.
    """
    uses = Counter(key for node in nodes for key in node.inputs)
    produced_by = {key: node for node in nodes for key in node.outputs}
    protected = set(feed_keys) | set(fetch_keys) | set(shared)
    out = []
    for node in nodes:
        if node.needs_step:
            fn = _donating_fn(node, uses, produced_by, protected)
        else:
            fn = _inplace_fn(node, uses, produced_by, protected)
        out.append(node if fn is None else dataclasses.replace(node, fn=fn))
    return out


def _dead_and_fresh(key: Hashable, uses: Counter, produced_by: dict[Hashable, Any],
                    protected: set[Hashable]) -> bool:
    """Conditions 2 and 3: a fresh, unaliased value this node alone reads."""
    if uses[key] != 1 or key in protected:
        return False
    source = produced_by.get(key)
    return source is not None and source.op is not None and source.op.type in FRESH_OUTPUT


def _donating_fn(node: Any, uses: Counter, produced_by: dict[Hashable, Any],
                 protected: set[Hashable]) -> Any:
    donating = getattr(node.fn, "donating", None)
    if donating is None or not node.inputs:
        return None
    mask = tuple(_dead_and_fresh(key, uses, produced_by, protected) for key in node.inputs)
    return donating(mask) if any(mask) else None


def _inplace_fn(node: Any, uses: Counter, produced_by: dict[Hashable, Any],
                protected: set[Hashable]) -> Any:
    op = node.op
    if op is None or (op.type not in UNARY and op.type not in BINARY) or len(op.outputs) != 1:
        return None
    for operand in range(len(node.inputs)):
        if not _dead_and_fresh(node.inputs[operand], uses, produced_by, protected):
            continue
        fn = inplace_variant(op.type, operand)
        if fn is not None and _result_fits(op, operand):
            return fn
    return None


def _result_fits(op: Any, operand: int) -> bool:
    """The op's result has the dtype and (static) shape of input ``operand``."""
    target = op.inputs[operand]
    if target.dtype not in FLOATING or op.outputs[0].dtype != target.dtype:
        return False
    if len(op.inputs) == 1:
        return True
    other = op.inputs[1 - operand]
    target_dims = target.shape.as_list() if target.shape.rank is not None else None
    other_dims = other.shape.as_list() if other.shape.rank is not None else None
    if target_dims is None or other_dims is None or len(other_dims) > len(target_dims):
        return False
    for o, t in zip(reversed(other_dims), reversed(target_dims)):
        if o is None or not (o == 1 or o == t):
            return False
    return True
