"""Kernels of ``flowmesh/ops/resource_variable_ops.py``: variables in resource stores.

Assignments and scatters hold the variable's lock, as TensorFlow's hold its mutex.
They write into the existing storage when shape and dtype match (so earlier
snapshots in the same step alias the variable, as TensorFlow 1.x reference variables
do) and otherwise replace it with a private copy; they never keep a reference to the
assigned value itself.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel, simple_kernel
from flowmesh.kernels.contract.resources import VariableState, under_variable_lock
from flowmesh.kernels.gather_ops import gather_rows


@kernel("VarHandleOp")
def _var_handle(ctx: KernelContext):
    name = ctx.attr("shared_name") or ctx.op.name
    state = ctx.device.resources.lookup_or_create(
        ctx.attr("container", ""), name,
        lambda: VariableState(name, ctx.attr("dtype"), ctx.attr("shape")),
    )
    return lambda: state


simple_kernel("ReadVariableOp", lambda state: state.read())


@kernel("AssignVariableOp")
def _assign(ctx: KernelContext):
    validate = ctx.attr("validate_shape", True)

    def assign(state: VariableState, value: Any) -> Any:
        current = state.value
        strings = isinstance(value, np.ndarray)  # string variables hold object arrays
        if (current is not None and not strings and current.shape == value.shape
                and current.dtype == value.dtype):
            return current.copy_(value)
        if validate and not state.shape.is_compatible_with(tuple(value.shape)):
            raise InvalidArgumentError(
                f"Assign requires shapes of both tensors to match. lhs shape= {state.shape} "
                f"rhs shape= {list(value.shape)} (variable {state.name})"
            )
        state.value = value.copy() if strings else value.clone(memory_format=torch.contiguous_format)
        return state.value

    return under_variable_lock(assign)


def _check_same_shape(state: VariableState, value: Any, op: str) -> Any:
    current = state.read()
    if current.shape != value.shape and value.dim() != 0:
        raise InvalidArgumentError(
            f"{op}: variable {state.name} has shape {list(current.shape)} but the value has "
            f"shape {list(value.shape)}"
        )
    return current


simple_kernel("AssignAddVariableOp",
              under_variable_lock(lambda state, v: _check_same_shape(state, v, "AssignAdd").add_(v)))
simple_kernel("AssignSubVariableOp",
              under_variable_lock(lambda state, v: _check_same_shape(state, v, "AssignSub").sub_(v)))
simple_kernel("VarIsInitializedOp", lambda state: torch.tensor(state.value is not None))


@kernel("VariableShape")
def _variable_shape(ctx: KernelContext):
    dtype = torch_dtype(ctx.attr("out_type"))
    return lambda state: torch.tensor(tuple(state.read().shape), dtype=dtype)


simple_kernel("ResourceGather", lambda state, indices: gather_rows(state.read(), indices, 0))


def _rows(state: VariableState, indices: Any, updates: Any) -> tuple[Any, Any, Any]:
    value = state.read()
    flat = indices.reshape(-1).long()
    rows = updates.reshape((flat.numel(),) + tuple(value.shape[1:]))
    if flat.numel():
        bad = (flat < 0) | (flat >= value.shape[0])
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            raise InvalidArgumentError(
                f"indices[{i}] = {int(flat[i])} is not in [0, {value.shape[0]}) for variable {state.name}"
            )
    return value, flat, rows


def _scatter_update(state: VariableState, indices: Any, updates: Any) -> Any:
    value, flat, rows = _rows(state, indices, updates)
    return value.index_copy_(0, flat, rows)


def _scatter_add(state: VariableState, indices: Any, updates: Any) -> Any:
    value, flat, rows = _rows(state, indices, updates)
    return value.index_add_(0, flat, rows)


def _scatter_sub(state: VariableState, indices: Any, updates: Any) -> Any:
    value, flat, rows = _rows(state, indices, updates)
    return value.index_add_(0, flat, rows, alpha=-1)


warnings.filterwarnings("ignore", message=r"index_reduce\(\) is in beta")  # stable in every torch we pin


def _scatter_reduce(mode: str):
    def run(state: VariableState, indices: Any, updates: Any) -> Any:
        value, flat, rows = _rows(state, indices, updates)
        if mode == "div":
            divisors = torch.ones_like(value).index_reduce_(0, flat, rows, "prod")
            return value.div_(divisors)
        return value.index_reduce_(0, flat, rows, mode)

    return run


def _scatter_nd(mode: str):
    def run(state: VariableState, indices: Any, updates: Any) -> Any:
        value = state.read()
        idx = indices.long()
        depth = idx.shape[-1]
        flat = idx.reshape(-1, depth)
        rows = updates.reshape((flat.shape[0],) + tuple(value.shape[depth:]))
        limits = torch.tensor(value.shape[:depth])
        bad = ((flat < 0) | (flat >= limits)).any(dim=1)
        if bool(bad.any()):
            i = int(bad.nonzero()[0])
            raise InvalidArgumentError(f"indices[{i}] = {flat[i].tolist()} does not index into shape "
                                       f"{list(value.shape)} of variable {state.name}")
        key = tuple(flat.t())
        if mode == "update":
            return value.index_put_(key, rows)
        return value.index_put_(key, rows if mode == "add" else -rows, accumulate=True)

    return run


simple_kernel("ResourceScatterMul", under_variable_lock(_scatter_reduce("prod")))
simple_kernel("ResourceScatterDiv", under_variable_lock(_scatter_reduce("div")))
simple_kernel("ResourceScatterMin", under_variable_lock(_scatter_reduce("amin")))
simple_kernel("ResourceScatterMax", under_variable_lock(_scatter_reduce("amax")))
simple_kernel("ResourceScatterNdUpdate", under_variable_lock(_scatter_nd("update")))
simple_kernel("ResourceScatterNdAdd", under_variable_lock(_scatter_nd("add")))
simple_kernel("ResourceScatterNdSub", under_variable_lock(_scatter_nd("sub")))
simple_kernel("ResourceScatterUpdate", under_variable_lock(_scatter_update))
simple_kernel("ResourceScatterAdd", under_variable_lock(_scatter_add))
simple_kernel("ResourceScatterSub", under_variable_lock(_scatter_sub))
