"""Kernels of ``flowmesh/ops/sparse_math_ops.py``: add, matmul, reductions, maximum/minimum,
softmax. Indices are int64 ``[N, rank]`` in canonical order where TensorFlow requires it."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.sparse_index import (
    check_bounds,
    check_ordered,
    dims_of,
    linearize,
    shape_tensor,
    unravel,
)


def _same_shapes(op: str, a: Any, b: Any) -> list[int]:
    da, db = dims_of(a), dims_of(b)
    if da != db:
        raise InvalidArgumentError(f"{op}: operands' shapes do not match: A.shape = {da} and "
                                   f"B.shape = {db}")
    return da


def _union(a_idx: Any, b_idx: Any, dims: list[int]) -> tuple[Any, Any, Any]:
    """Sorted union of two index sets: (linear ids, position of each a / b entry in it)."""
    lin = torch.cat([linearize(a_idx, dims), linearize(b_idx, dims)])
    ids, inverse = torch.unique(lin, sorted=True, return_inverse=True)
    return ids, inverse[:a_idx.shape[0]], inverse[a_idx.shape[0]:]


@kernel("SparseAdd")
def _sparse_add(ctx: KernelContext):
    def run(ai: Any, av: Any, ash: Any, bi: Any, bv: Any, bsh: Any, thresh: Any) -> tuple[Any, Any, Any]:
        dims = _same_shapes("SparseAdd", ash, bsh)
        check_ordered("SparseAdd", ai, dims)
        check_ordered("SparseAdd", bi, dims)
        ids, pa, pb = _union(ai, bi, dims)
        vals = torch.zeros(ids.numel(), dtype=av.dtype).index_add_(0, pa, av).index_add_(0, pb, bv)
        both = torch.zeros(ids.numel(), dtype=torch.long).index_add_(0, pa, torch.ones_like(pa))
        both = (both > 0) & torch.zeros_like(both).index_add_(0, pb, torch.ones_like(pb)).gt(0)
        keep = ~both | (vals.abs() >= thresh.to(vals.dtype))
        return unravel(ids[keep], dims), vals[keep], shape_tensor(dims, ash)

    return run


@kernel("SparseAddGrad")
def _sparse_add_grad(ctx: KernelContext):
    def pick(grad: Any, sum_lin: Any, lin: Any) -> Any:
        pos = torch.searchsorted(sum_lin, lin).clamp(max=max(sum_lin.numel() - 1, 0))
        hit = sum_lin[pos] == lin if sum_lin.numel() else torch.zeros_like(lin, dtype=torch.bool)
        return torch.where(hit, grad[pos] if grad.numel() else torch.zeros_like(lin, dtype=grad.dtype),
                           torch.zeros((), dtype=grad.dtype))

    def run(grad: Any, ai: Any, bi: Any, si: Any) -> tuple[Any, Any]:
        cols = torch.cat([ai, bi, si]).max(0).values + 1 if (ai.numel() + bi.numel() + si.numel()) else None
        dims = cols.tolist() if cols is not None else [1] * ai.shape[1]
        sum_lin = linearize(si, dims)
        return pick(grad, sum_lin, linearize(ai, dims)), pick(grad, sum_lin, linearize(bi, dims))

    return run


@kernel("SparseTensorDenseAdd")
def _sparse_dense_add(ctx: KernelContext):
    def run(ai: Any, av: Any, ash: Any, b: Any) -> Any:
        dims = dims_of(ash)
        if list(b.shape) != dims:
            raise InvalidArgumentError(f"SparseTensorDenseAdd: dimension mismatch: the SparseTensor "
                                       f"has dense shape {dims}, the dense operand {list(b.shape)}")
        check_bounds("SparseTensorDenseAdd", ai, dims)
        out = b.clone()
        if ai.numel():
            out.index_put_(tuple(ai.t()), av.to(b.dtype), accumulate=True)
        return out

    return run


@kernel("SparseTensorDenseMatMul")
def _sparse_dense_matmul(ctx: KernelContext):
    adj_a, adj_b = bool(ctx.attr("adjoint_a", False)), bool(ctx.attr("adjoint_b", False))

    def run(ai: Any, av: Any, ash: Any, b: Any) -> Any:
        dims = dims_of(ash)
        rows, cols = (ai[:, 1], ai[:, 0]) if adj_a else (ai[:, 0], ai[:, 1])
        m, k = (dims[1], dims[0]) if adj_a else (dims[0], dims[1])
        right = b.t() if adj_b else b
        if right.shape[0] != k:
            raise InvalidArgumentError(f"SparseTensorDenseMatMul: cannot multiply A (dense shape {dims}, "
                                       f"adjoint_a={adj_a}) by B (shape {list(b.shape)}, adjoint_b={adj_b}):"
                                       f" inner dimensions {k} and {right.shape[0]} differ")
        check_bounds("SparseTensorDenseMatMul", ai, dims)
        out = torch.zeros((m, right.shape[1]), dtype=b.dtype)
        if ai.numel():
            out.index_add_(0, rows, av.to(b.dtype)[:, None] * right[cols])
        return out

    return run


def _groups(ctx: KernelContext, ind: Any, shape: Any, axes: Any) -> tuple[Any, Any, list[int], list[int]]:
    """Linear id in the reduced tensor of each entry, the sorted group ids, and output dims."""
    dims = dims_of(shape)
    rank = len(dims)
    ax = sorted({(a + rank) % rank for a in axes.reshape(-1).tolist()}) if axes.numel() else []
    if any(not -rank <= a < rank for a in axes.reshape(-1).tolist()):
        raise InvalidArgumentError(f"{ctx.op.type}: reduction axes {axes.tolist()} out of range for "
                                   f"rank {rank}")
    kept = [d for d in range(rank) if d not in ax]
    keep_dims = bool(ctx.attr("keep_dims", False))
    out_dims = [1 if d in ax else dims[d] for d in range(rank)] if keep_dims else [dims[d] for d in kept]
    lin = linearize(ind[:, kept], [dims[d] for d in kept])
    group_ids, inverse = torch.unique(lin, sorted=True, return_inverse=True)
    return group_ids, inverse, out_dims, [dims[d] for d in kept]


def _reduce(ctx: KernelContext, how: str, sparse_out: bool):
    def run(ind: Any, vals: Any, shape: Any, axes: Any) -> Any:
        group_ids, inverse, out_dims, kept_dims = _groups(ctx, ind, shape, axes)
        if how == "sum":
            red = torch.zeros(group_ids.numel(), dtype=vals.dtype).index_add_(0, inverse, vals)
        else:
            red = torch.zeros(group_ids.numel(), dtype=vals.dtype).scatter_reduce_(
                0, inverse, vals, "amax", include_self=False)
        if sparse_out:
            out_idx = unravel(group_ids, kept_dims)
            if len(out_dims) != len(kept_dims):  # keep_dims: zeros in the reduced axes
                full = torch.zeros((out_idx.shape[0], len(out_dims)), dtype=torch.long)
                full[:, [i for i, d in enumerate(out_dims) if not _reduced(ctx, shape, axes, i)]] = out_idx
                out_idx = full
            return out_idx, red, shape_tensor(out_dims, shape)
        numel = 1
        for d in out_dims:
            numel *= d
        return torch.zeros(numel, dtype=vals.dtype).index_put_((group_ids,), red).reshape(out_dims)

    return run


def _reduced(ctx: KernelContext, shape: Any, axes: Any, i: int) -> bool:
    rank = shape.numel()
    return i in {(a + rank) % rank for a in axes.reshape(-1).tolist()}


kernel("SparseReduceSum")(lambda ctx: _reduce(ctx, "sum", False))
kernel("SparseReduceMax")(lambda ctx: _reduce(ctx, "max", False))
kernel("SparseReduceSumSparse")(lambda ctx: _reduce(ctx, "sum", True))
kernel("SparseReduceMaxSparse")(lambda ctx: _reduce(ctx, "max", True))


def _elementwise(op: str, fn: Any):
    def factory(ctx: KernelContext):
        def run(ai: Any, av: Any, ash: Any, bi: Any, bv: Any, bsh: Any) -> tuple[Any, Any]:
            dims = _same_shapes(op, ash, bsh)
            check_ordered(op, ai, dims)
            check_ordered(op, bi, dims)
            ids, pa, pb = _union(ai, bi, dims)
            a_full = torch.zeros(ids.numel(), dtype=av.dtype).index_put_((pa,), av)
            b_full = torch.zeros(ids.numel(), dtype=bv.dtype).index_put_((pb,), bv)
            return unravel(ids, dims), fn(a_full, b_full)

        return run

    return factory


kernel("SparseSparseMaximum")(_elementwise("SparseSparseMaximum", torch.maximum))
kernel("SparseSparseMinimum")(_elementwise("SparseSparseMinimum", torch.minimum))


@kernel("SparseSoftmax")
def _softmax(ctx: KernelContext):
    def run(ind: Any, vals: Any, shape: Any) -> Any:
        dims = dims_of(shape)
        if len(dims) < 2:
            raise InvalidArgumentError(f"SparseSoftmax: the SparseTensor must have rank >= 2, got "
                                       f"dense shape {dims}")
        check_ordered("SparseSoftmax", ind, dims)
        lin = linearize(ind[:, :-1], dims[:-1])
        _, inverse = torch.unique(lin, return_inverse=True)
        n = int(inverse.max()) + 1 if inverse.numel() else 0
        top = torch.full((n,), float("-inf"), dtype=vals.dtype).scatter_reduce_(0, inverse, vals, "amax")
        e = torch.exp(vals - top[inverse])
        total = torch.zeros(n, dtype=vals.dtype).index_add_(0, inverse, e)
        return e / total[inverse]

    return run
