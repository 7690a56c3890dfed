"""Kernels of ``flowmesh/ops/training_ops.py``: in-place optimizer updates.

``var`` and slot arguments are :class:`VariableState` objects; updates mutate their
storage in place (``mul_``, ``addcmul_``, ``addcdiv_``...) so a dense step allocates at
most one temporary. Each optimizer's arithmetic is one *math function* working on plain
tensors, ``math(tensors, grad, hyper, opts)``, where ``tensors`` is ``[var, *slots]``
(updated in place), ``hyper`` the hyperparameters as Python floats in the op's argument
order and ``opts`` the op's boolean attrs. Dense kernels apply it to the whole variable;
sparse kernels gather the touched rows (after summing repeated indices), apply the same
function to them and scatter them back, so dense and sparse updates share one formula.
The formulas are TensorFlow's (``training_ops.cc``).

Locking: an update that is one pass over the variable (gradient descent) is lock-free
unless ``use_locking`` asks otherwise, as in TensorFlow. Every multi-pass update (slots
first, then the variable) holds the variable's lock even with ``use_locking=False``:
TensorFlow's kernels run their passes back to back, but a Python thread can lose the GIL
between two passes for a whole switch interval, and a concurrent update landing in that
gap hands the first one a slot mix from two steps. For Adam that is fatal, not just
stale: a fresh ``m`` over an old ``v ~ 0`` divides by epsilon (asynchronous workers with
gradients of disjoint support blew weights up to ~1e5). Reads stay lock-free (Hogwild).
"""

from __future__ import annotations

import math as _math
from collections.abc import Callable
from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.coalesced import Coalesced, flat_values
from flowmesh.kernels.registry import KernelContext, kernel
from flowmesh.kernels.resources import VariableState, under_variable_lock
from flowmesh.ops.training_ops import SIGNATURES

MathFn = Callable[[list[Any], Any, list[float], dict[str, bool]], None]
_STATE_NAMES = ("var", "accum", "accum_update", "m", "v", "ms", "mom", "mg", "linear")


# --- sparse rows -----------------------------------------------------------------------------
def sparse_rows(state: VariableState, values: Any, indices: Any, op_type: str,
                dedup: bool = True) -> tuple[Any, Any, Any]:
    """The variable's storage, validated row indices and the gradient rows.

    Args:
        state: the variable.
        values: gradient rows, shape ``[len(indices), *var.shape[1:]]``.
        indices: row indices (int32/int64, any shape; flattened).
        op_type: for error messages.
        dedup: sum the values of repeated indices, returning unique indices.

    Returns:
        ``(storage, indices as int64 vector, rows)``.

    Raises:
        InvalidArgumentError: an index is outside ``[0, var.shape[0])``.
    """
    table = state.read()
    idx = indices.reshape(-1).long()
    rows = table.shape[0]
    count = idx.numel()
    if count:
        low, high = torch.aminmax(idx)
        if int(low) < 0 or int(high) >= rows:
            bad = int(((idx < 0) | (idx >= rows)).nonzero()[0])
            raise InvalidArgumentError(
                f"{op_type}: indices[{bad}] = {int(idx[bad])} is not in [0, {rows}) for variable "
                f"{state.name} of shape {list(table.shape)}")
    vals = values.reshape((count,) + tuple(table.shape[1:]))
    if dedup and count > 1:
        unique, inverse = torch.unique(idx, return_inverse=True)
        if unique.numel() < count:
            summed = vals.new_zeros((unique.numel(),) + tuple(vals.shape[1:]))
            return table, unique, summed.index_add_(0, inverse, vals)
    return table, idx, vals


# --- registration --------------------------------------------------------------------------------
def _opts(ctx: KernelContext) -> dict[str, bool]:
    return {"use_nesterov": bool(ctx.attr("use_nesterov", False)),
            "update_slots": bool(ctx.attr("update_slots", True))}


def register_update(op_type: str, math: MathFn) -> None:
    """Registers the kernel of ``op_type`` (dense or sparse) from its math function."""
    names = SIGNATURES[op_type]
    states = [i for i, n in enumerate(names) if n in _STATE_NAMES]
    grad = names.index("grad") if "grad" in names else names.index("delta")
    hyper = [i for i, n in enumerate(names)
             if n not in _STATE_NAMES and n not in ("grad", "delta", "indices")]
    index = names.index("indices") if "indices" in names else None

    @kernel(op_type)
    def factory(ctx: KernelContext) -> Callable[..., None]:
        opts = _opts(ctx)
        if index is None:
            def apply(*args: Any) -> None:
                math([args[i].read() for i in states], args[grad],
                     [args[i].item() for i in hyper], opts)
        else:
            def apply(*args: Any) -> None:  # type: ignore[misc]
                table, idx, g = sparse_rows(args[0], args[grad], args[index], op_type)
                full = [table] + [args[i].read() for i in states[1:]]
                rows = [t.index_select(0, idx) for t in full]
                math(rows, g, [args[i].item() for i in hyper], opts)
                for t, r in zip(full, rows):
                    t.index_copy_(0, idx, r)
        return under_variable_lock(apply)  # several passes: see the module docstring


# --- the formulas --------------------------------------------------------------------------------
def _momentum(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, accum = t
    lr, momentum = h
    accum.mul_(momentum).add_(g)
    if o["use_nesterov"]:
        var.sub_(g, alpha=lr).sub_(accum, alpha=lr * momentum)
    else:
        var.sub_(accum, alpha=lr)


def _adam_alpha(beta1_power: float, beta2_power: float, lr: float) -> float:
    return lr * _math.sqrt(1.0 - beta2_power) / (1.0 - beta1_power)


def _adam(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, m, v = t
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = h
    alpha = _adam_alpha(beta1_power, beta2_power, lr)
    m.lerp_(g, 1.0 - beta1)
    v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
    denom = v.sqrt().add_(epsilon)
    if o["use_nesterov"]:
        var.addcdiv_(m * beta1 + g * (1.0 - beta1), denom, value=-alpha)
    else:
        var.addcdiv_(m, denom, value=-alpha)


def _adagrad(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, accum = t
    (lr,) = h
    if o["update_slots"]:
        accum.addcmul_(g, g)
    var.addcmul_(g, accum.rsqrt(), value=-lr)


def _rmsprop(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, ms, mom = t
    lr, rho, momentum, epsilon = h
    ms.mul_(rho).addcmul_(g, g, value=1.0 - rho)
    mom.mul_(momentum).addcmul_(g, ms.add(epsilon).rsqrt_(), value=lr)
    var.sub_(mom)


def _centered_rmsprop(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, mg, ms, mom = t
    lr, rho, momentum, epsilon = h
    ms.mul_(rho).addcmul_(g, g, value=1.0 - rho)
    mg.mul_(rho).add_(g, alpha=1.0 - rho)
    denom = ms.addcmul(mg, mg, value=-1.0).add_(epsilon)
    mom.mul_(momentum).addcmul_(g, denom.rsqrt_(), value=lr)
    var.sub_(mom)


def _adadelta(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, accum, accum_update = t
    lr, rho, epsilon = h
    accum.mul_(rho).addcmul_(g, g, value=1.0 - rho)
    update = accum_update.add(epsilon).sqrt_().mul_(accum.add(epsilon).rsqrt_()).mul_(g)
    var.sub_(update, alpha=lr)
    accum_update.mul_(rho).addcmul_(update, update, value=1.0 - rho)


def _ftrl_core(t: list[Any], g: Any, lr: float, l1: float, l2: float, shrinkage: float,
               lr_power: float) -> None:
    var, accum, linear = t
    g_shrunk = g if shrinkage == 0.0 else g + (2.0 * shrinkage) * var
    new_accum = accum.addcmul(g, g)
    if lr_power == -0.5:
        new_pow, old_pow = new_accum.sqrt(), accum.sqrt()
    else:
        new_pow, old_pow = new_accum.pow(-lr_power), accum.pow(-lr_power)
    linear.add_(g_shrunk).sub_(new_pow.sub(old_pow).div_(lr).mul_(var))
    denom = new_pow.div_(lr).add_(2.0 * l2)
    var.copy_(linear.clamp(-l1, l1).sub_(linear).div_(denom))
    accum.copy_(new_accum)


def _ftrl(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    lr, l1, l2, lr_power = h
    _ftrl_core(t, g, lr, l1, l2, 0.0, lr_power)


def _ftrl_v2(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    lr, l1, l2, shrinkage, lr_power = h
    _ftrl_core(t, g, lr, l1, l2, shrinkage, lr_power)


for _name, _fn in {
    "Momentum": _momentum, "Adam": _adam, "Adagrad": _adagrad, "RMSProp": _rmsprop,
    "CenteredRMSProp": _centered_rmsprop, "Adadelta": _adadelta, "Ftrl": _ftrl,
    "FtrlV2": _ftrl_v2,
}.items():
    register_update(f"ResourceApply{_name}", _fn)
    if _name != "Adam":
        register_update(f"ResourceSparseApply{_name}", _fn)


# --- gradient descent and sparse Adam: hand-written for speed / TensorFlow's semantics --------
@kernel("ResourceApplyGradientDescent")
def _gradient_descent(ctx: KernelContext) -> Callable[..., None]:
    def apply(var: VariableState, alpha: Any, delta: Any) -> None:
        var.read().sub_(delta, alpha=alpha.item())

    return under_variable_lock(apply) if ctx.attr("use_locking", False) else apply


@kernel("ResourceSparseApplyGradientDescent")
def _sparse_gradient_descent(ctx: KernelContext) -> Callable[..., None]:
    def apply(var: VariableState, alpha: Any, values: Any, indices: Any) -> None:
        table, idx, rows = sparse_rows(var, values, indices, ctx.op.type, dedup=False)
        table.index_add_(0, idx, rows, alpha=-alpha.item())

    return under_variable_lock(apply) if ctx.attr("use_locking", False) else apply


@kernel("ResourceSparseApplyAdam")
def _sparse_adam(ctx: KernelContext) -> Callable[..., None]:
    """TensorFlow's ``AdamOptimizer._apply_sparse``: both moments decay on every row, the
    (deduplicated) gradient rows are scattered in, and every row of the variable moves."""
    nesterov = bool(ctx.attr("use_nesterov", False))

    def apply(var: VariableState, m: VariableState, v: VariableState, *args: Any) -> None:
        *hyper, values, indices = args
        beta1_power, beta2_power, lr, beta1, beta2, epsilon = (x.item() for x in hyper)
        table, idx, g = sparse_rows(var, values, indices, ctx.op.type)
        alpha = _adam_alpha(beta1_power, beta2_power, lr)
        m_t = m.read().mul_(beta1).index_add_(0, idx, g, alpha=1.0 - beta1)
        v_t = v.read().mul_(beta2).index_add_(0, idx, g * g, alpha=1.0 - beta2)
        denom = v_t.sqrt().add_(epsilon)
        if nesterov:
            m_t = m_t * beta1
            m_t.index_add_(0, idx, g, alpha=1.0 - beta1)
        table.addcdiv_(m_t, denom, value=-alpha)

    return under_variable_lock(apply)  # several passes: see the module docstring


# --- multi-tensor (torch._foreach_*) variants for runs of updates ------------------------------
#: op type -> input positions that must be the same value in every update of a fused run
#: (the hyperparameters). Used by ``flowmesh/runtime/fusion.py``.
MULTI_TENSOR_SHARED: dict[str, tuple[int, ...]] = {
    "ResourceApplyGradientDescent": (1,),
    "ResourceApplyMomentum": (2, 4),
    "ResourceApplyAdam": (3, 4, 5, 6, 7, 8),
}


def multi_tensor_update(op_type: str, count: int, attrs: dict[str, Any]) -> Callable[..., None] | None:
    """One kernel applying ``count`` updates of ``op_type`` with ``torch._foreach_*`` ops.

    Args:
        op_type: a key of :data:`MULTI_TENSOR_SHARED`.
        count: number of updates (variables) in the run.
        attrs: the (identical) attrs of the run's ops.

    Returns:
        ``fn(*inputs of update 1, *inputs of update 2, ...)``, or None when this op type or
        these attrs have no multi-tensor form (locking, Nesterov Adam).
    """
    if attrs.get("use_locking", False) or op_type not in MULTI_TENSOR_SHARED:
        return None
    width = len(SIGNATURES[op_type])
    if op_type == "ResourceApplyGradientDescent":
        return _foreach_gradient_descent(width)
    if op_type == "ResourceApplyMomentum":
        return _all_locked(_foreach_momentum(width, bool(attrs.get("use_nesterov", False))), width)
    if attrs.get("use_nesterov", False):
        return None
    return _all_locked(_foreach_adam(width), width)


def _all_locked(fn: Callable[..., None], width: int) -> Callable[..., None]:
    """``fn`` holding the lock of every variable of the run (several passes: see the module
    docstring), taken in one global order so two runs over the same variables cannot
    deadlock (a single update holds one lock and waits for nothing else)."""
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


def _column(args: tuple[Any, ...], width: int, position: int, read: bool = False) -> list[Any]:
    values = args[position::width]
    return [v.read() for v in values] if read else list(values)


def _flat_columns(count: int) -> Callable[..., list[Any] | None]:
    """``flat(args, width, state_positions, grad_position)``: the flat buffers of the state
    columns and the gradients (``kernels/coalesced.py``), or None to go variable by variable."""
    columns = [Coalesced() for _ in range(count)]

    def flat(args: tuple[Any, ...], width: int, positions: tuple[int, ...], grad: int) -> list[Any] | None:
        buffers = []
        for column, position in zip(columns, positions):
            buffer = column.flat(args[position::width])
            if buffer is None:
                return None
            buffers.append(buffer)
        grads = flat_values(args[grad::width], buffers[0])
        return None if grads is None else buffers + [grads]

    return flat


def _foreach_gradient_descent(width: int) -> Callable[..., None]:
    flat = _flat_columns(1)

    def apply(*args: Any) -> None:
        lr = args[1].item()
        buffers = flat(args, width, (0,), 2)
        if buffers is not None:
            buffers[0].add_(buffers[1], alpha=-lr)
            return
        torch._foreach_add_(_column(args, width, 0, True), _column(args, width, 2), alpha=-lr)

    return apply


def _momentum_step(variables: Any, accums: Any, grads: Any, lr: float, momentum: float, nesterov: bool,
                   ops: Any) -> None:
    """TensorFlow's momentum update with ``ops`` one tensor's methods or ``torch._foreach_*``."""
    ops.mul_(accums, momentum)
    ops.add_(accums, grads)
    if nesterov:
        ops.add_(variables, grads, alpha=-lr)
        ops.add_(variables, accums, alpha=-lr * momentum)
    else:
        ops.add_(variables, accums, alpha=-lr)


def _foreach_momentum(width: int, nesterov: bool) -> Callable[..., None]:
    flat = _flat_columns(2)

    def apply(*args: Any) -> None:
        lr, momentum = args[2].item(), args[4].item()
        buffers = flat(args, width, (0, 1), 3)
        if buffers is not None:
            _momentum_step(*buffers, lr, momentum, nesterov, _TENSOR_OPS)
            return
        variables, accums = _column(args, width, 0, True), _column(args, width, 1, True)
        _momentum_step(variables, accums, _column(args, width, 3), lr, momentum, nesterov, _FOREACH_OPS)

    return apply


def _adam_step(variables: Any, ms: Any, vs: Any, grads: Any, hyper: list[float], ops: Any) -> None:
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = hyper
    alpha = _adam_alpha(beta1_power, beta2_power, lr)
    ops.lerp_(ms, grads, 1.0 - beta1)
    ops.mul_(vs, beta2)
    ops.addcmul_(vs, grads, grads, value=1.0 - beta2)
    denom = ops.sqrt(vs)
    ops.add_(denom, epsilon)
    ops.addcdiv_(variables, ms, denom, value=-alpha)


def _foreach_adam(width: int) -> Callable[..., None]:
    flat = _flat_columns(3)

    def apply(*args: Any) -> None:
        hyper = [x.item() for x in args[3:9]]
        buffers = flat(args, width, (0, 1, 2), 9)
        if buffers is not None:
            _adam_step(*buffers, hyper, _TENSOR_OPS)
            return
        variables = _column(args, width, 0, True)
        ms, vs = _column(args, width, 1, True), _column(args, width, 2, True)
        _adam_step(variables, ms, vs, _column(args, width, 9), hyper, _FOREACH_OPS)

    return apply


class _TENSOR_OPS:  # noqa: N801 - a namespace, as torch's
    """The update ops on one (flat) tensor, named as the multi-tensor ones."""

    mul_, add_, lerp_, addcmul_, addcdiv_, sqrt = (
        torch.Tensor.mul_, torch.Tensor.add_, torch.Tensor.lerp_, torch.Tensor.addcmul_,
        torch.Tensor.addcdiv_, torch.sqrt)


class _FOREACH_OPS:  # noqa: N801
    mul_, add_, lerp_, addcmul_, addcdiv_, sqrt = (
        torch._foreach_mul_, torch._foreach_add_, torch._foreach_lerp_, torch._foreach_addcmul_,
        torch._foreach_addcdiv_, torch._foreach_sqrt)
