"""One kernel for a run of dense optimizer updates (``runtime/fusion.py``), every optimizer.

``apply_gradients`` creates one ``ResourceApply*`` op per variable; a contiguous run of
them with the same hyperparameters becomes one node whose kernel comes from here:

* 16 or more small variables (``kernels/coalesced.py``): each column (the variables, each
  slot) lives in one flat buffer, and the optimizer's own math function
  (``kernels/training_ops.py``) runs once over the buffers and the flat gradients;
* otherwise ``torch._foreach_*`` ops for gradient descent, momentum and Adam (one call per
  op for all variables), and the math function variable by variable for the others.

Every update but gradient descent holds all its variables' locks (several passes, see
``kernels/training_ops.py``), taken in one global order so two runs cannot deadlock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from flowmesh.kernels.coalesced import Coalesced, flat_values
from flowmesh.kernels.training_ops import DENSE_MATH, adam_alpha, update_layout, update_options
from flowmesh.ops.training_ops import SIGNATURES

_GD = "ResourceApplyGradientDescent"

#: op type -> input positions that must be the same value in every update of a fused run
#: (the hyperparameters). Used by ``flowmesh/runtime/fusion.py``.
MULTI_TENSOR_SHARED: dict[str, tuple[int, ...]] = {
    op_type: tuple(update_layout(op_type)[2]) for op_type in [_GD, *sorted(DENSE_MATH)]
}


def multi_tensor_update(op_type: str, count: int, attrs: dict[str, Any]) -> Callable[..., None] | None:
    """One kernel applying ``count`` updates of ``op_type``.

    Args:
        op_type: a key of :data:`MULTI_TENSOR_SHARED`.
        count: number of updates (variables) in the run.
        attrs: the (identical) attrs of the run's ops.

    Returns:
        ``fn(*inputs of update 1, *inputs of update 2, ...)``, or None with ``use_locking``
        (each update then keeps its own locked kernel).
    """
    if attrs.get("use_locking", False) or op_type not in MULTI_TENSOR_SHARED:
        return None
    width = len(SIGNATURES[op_type])
    if op_type == _GD:
        return _gradient_descent(width)
    opts = update_options(attrs)
    fallback = _FOREACH.get(op_type)
    if fallback is None or (op_type == "ResourceApplyAdam" and opts["use_nesterov"]):
        fallback = _one_by_one
    return _all_locked(_flat_or(op_type, width, opts, fallback), width)


def _flat_columns(count: int) -> Callable[..., list[Any] | None]:
    """``flat(args, width, state_positions, grad_position)``: the buffers of the state
    columns and the flat gradients, or None to go variable by variable."""
    columns = [Coalesced() for _ in range(count)]

    def flat(args: tuple[Any, ...], width: int, positions: list[int], grad: int) -> list[Any] | None:
        buffers = []
        for column, position in zip(columns, positions):
            buffer = column.flat(args[position::width])
            if buffer is None:
                return None
            buffers.append(buffer)
        grads = flat_values(args[grad::width], buffers[0])
        return None if grads is None else buffers + [grads]

    return flat


def _gradient_descent(width: int) -> Callable[..., None]:
    flat = _flat_columns(1)

    def apply(*args: Any) -> None:
        lr = args[1].item()
        buffers = flat(args, width, [0], 2)
        if buffers is not None:
            buffers[0].add_(buffers[1], alpha=-lr)
            return
        torch._foreach_add_(_column(args, width, 0, True), _column(args, width, 2), alpha=-lr)

    return apply


def _flat_or(op_type: str, width: int, opts: dict[str, bool], fallback: Callable[..., None]) -> Callable[..., None]:
    math = DENSE_MATH[op_type]
    states, grad, hyper = update_layout(op_type)
    flat = _flat_columns(len(states))

    def apply(*args: Any) -> None:
        values = [args[i].item() for i in hyper]
        buffers = flat(args, width, states, grad)
        if buffers is not None:
            math(buffers[:-1], buffers[-1], values, opts)
        else:
            fallback(op_type, width, args, values, opts)

    return apply


def _one_by_one(op_type: str, width: int, args: tuple[Any, ...], hyper: list[float], opts: dict[str, bool]) -> None:
    math = DENSE_MATH[op_type]
    states, grad, _ = update_layout(op_type)
    for start in range(0, len(args), width):
        one = args[start:start + width]
        math([one[i].read() for i in states], one[grad], hyper, opts)


def _column(args: tuple[Any, ...], width: int, position: int, read: bool = False) -> list[Any]:
    values = args[position::width]
    return [v.read() for v in values] if read else list(values)


def _foreach_momentum(op_type: str, width: int, args: tuple[Any, ...], hyper: list[float],
                      opts: dict[str, bool]) -> None:
    variables, accums = _column(args, width, 0, True), _column(args, width, 1, True)
    grads = _column(args, width, 3)
    lr, momentum = hyper
    torch._foreach_mul_(accums, momentum)
    torch._foreach_add_(accums, grads)
    if opts["use_nesterov"]:
        torch._foreach_add_(variables, grads, alpha=-lr)
        torch._foreach_add_(variables, accums, alpha=-lr * momentum)
    else:
        torch._foreach_add_(variables, accums, alpha=-lr)


def _foreach_adam(op_type: str, width: int, args: tuple[Any, ...], hyper: list[float],
                  opts: dict[str, bool]) -> None:
    variables = _column(args, width, 0, True)
    ms, vs = _column(args, width, 1, True), _column(args, width, 2, True)
    grads = _column(args, width, 9)
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = hyper
    alpha = adam_alpha(beta1_power, beta2_power, lr)
    torch._foreach_lerp_(ms, grads, 1.0 - beta1)
    torch._foreach_mul_(vs, beta2)
    torch._foreach_addcmul_(vs, grads, grads, value=1.0 - beta2)
    denom = torch._foreach_sqrt(vs)
    torch._foreach_add_(denom, epsilon)
    torch._foreach_addcdiv_(variables, ms, denom, value=-alpha)


_FOREACH = {"ResourceApplyMomentum": _foreach_momentum, "ResourceApplyAdam": _foreach_adam}


def _all_locked(fn: Callable[..., None], width: int) -> Callable[..., None]:
    """``fn`` holding the lock of every variable of the run, taken in one global order
    (by id) so two runs over the same variables cannot deadlock (a single update holds one
    lock and waits for nothing else)."""
    order: list[Any] = [(), []]  # the variables of the last call, their locks in order

    def run(*args: Any) -> None:
        variables = args[0::width]
        if order[0] != variables:
            order[:] = [variables, [v.lock for v in sorted(set(variables), key=id)]]
        locks, held = order[1], 0
        try:
            for lock in locks:
                lock.acquire()
                held += 1
            fn(*args)
        finally:
            for lock in reversed(locks[:held]):
                lock.release()

    return run
