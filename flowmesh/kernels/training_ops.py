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
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.contract.resources import VariableState, under_variable_lock
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
#: dense op type -> its math function (``kernels/multi_update.py`` applies it to many
#: variables at once)
DENSE_MATH: dict[str, MathFn] = {}


def update_layout(op_type: str) -> tuple[list[int], int, list[int]]:
    """Input positions of ``op_type``'s variable and slots, its gradient, its hyperparameters."""
    names = SIGNATURES[op_type]
    states = [i for i, n in enumerate(names) if n in _STATE_NAMES]
    grad = names.index("grad") if "grad" in names else names.index("delta")
    hyper = [i for i, n in enumerate(names)
             if n not in _STATE_NAMES and n not in ("grad", "delta", "indices")]
    return states, grad, hyper


def update_options(attrs: dict[str, Any]) -> dict[str, bool]:
    """The boolean attrs the math functions read."""
    return {"use_nesterov": bool(attrs.get("use_nesterov", False)),
            "update_slots": bool(attrs.get("update_slots", True))}


def register_update(op_type: str, math: MathFn) -> None:
    """Registers the kernel of ``op_type`` (dense or sparse) from its math function."""
    names = SIGNATURES[op_type]
    states, grad, hyper = update_layout(op_type)
    index = names.index("indices") if "indices" in names else None
    if index is None:
        DENSE_MATH[op_type] = math

    @kernel(op_type)
    def factory(ctx: KernelContext) -> Callable[..., None]:
        opts = update_options(ctx.op.attrs)
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


def adam_alpha(beta1_power: float, beta2_power: float, lr: float) -> float:
    return lr * _math.sqrt(1.0 - beta2_power) / (1.0 - beta1_power)


def _adam(t: list[Any], g: Any, h: list[float], o: dict[str, bool]) -> None:
    var, m, v = t
    beta1_power, beta2_power, lr, beta1, beta2, epsilon = h
    alpha = adam_alpha(beta1_power, beta2_power, lr)
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
        alpha = adam_alpha(beta1_power, beta2_power, lr)
        m_t = m.read().mul_(beta1).index_add_(0, idx, g, alpha=1.0 - beta1)
        v_t = v.read().mul_(beta2).index_add_(0, idx, g * g, alpha=1.0 - beta2)
        denom = v_t.sqrt().add_(epsilon)
        if nesterov:
            m_t = m_t * beta1
            m_t.index_add_(0, idx, g, alpha=1.0 - beta1)
        table.addcdiv_(m_t, denom, value=-alpha)

    return under_variable_lock(apply)  # several passes: see the module docstring
