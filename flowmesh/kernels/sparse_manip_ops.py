"""Kernels of ``flowmesh/ops/sparse_manip_ops.py`` (reorder, reshape, slice, concat, split,
fill_empty_rows). Indices are int64 ``[N, rank]``; string values are NumPy object arrays."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel
from flowmesh.kernels.sparse_index import (
    cat_values,
    check_bounds,
    dims_of,
    linearize,
    shape_tensor,
    take,
    unravel,
)


@kernel("SparseReorder")
def _reorder(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any) -> tuple[Any, Any]:
        dims = dims_of(shape)
        check_bounds("SparseReorder", indices, dims)
        perm = torch.argsort(linearize(indices, dims), stable=True)
        return indices[perm], take(values, perm)

    return run


@kernel("SparseReshape")
def _reshape(ctx: KernelContext):
    def run(indices: Any, shape: Any, new_shape: Any) -> tuple[Any, Any]:
        dims, wanted = dims_of(shape), dims_of(new_shape)
        total = 1
        for d in dims:
            total *= d
        if wanted.count(-1) > 1:
            raise InvalidArgumentError(f"SparseReshape: only one output dimension may be -1, got {wanted}")
        known = 1
        for d in wanted:
            known *= d if d != -1 else 1
        if -1 in wanted:
            if known == 0 or total % known:
                raise InvalidArgumentError(f"SparseReshape: cannot infer the -1 in {wanted} for a "
                                           f"SparseTensor of dense shape {dims} ({total} elements)")
            wanted[wanted.index(-1)] = total // known
        elif known != total:
            raise InvalidArgumentError(
                f"SparseReshape: Input to reshape is a tensor with {total} dense values (dense shape "
                f"{dims}), but the requested shape {wanted} has {known}")
        return unravel(linearize(indices, dims), wanted), shape_tensor(wanted, shape)

    return run


@kernel("SparseSlice")
def _slice(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any, start: Any, size: Any) -> tuple[Any, Any, Any]:
        dims, lo, n = dims_of(shape), dims_of(start), dims_of(size)
        if not len(dims) == len(lo) == len(n):
            raise InvalidArgumentError(f"SparseSlice: start {lo} and size {n} must both have the "
                                       f"rank of dense shape {dims}")
        out = [max(0, min(s, d - b)) for d, b, s in zip(dims, lo, n)]
        lo_t = shape_tensor(lo, indices)
        keep = ((indices >= lo_t) & (indices < lo_t + shape_tensor(out, indices))).all(1)
        pos = keep.nonzero().reshape(-1)
        return indices[pos] - lo_t, take(values, pos), shape_tensor(out, shape)

    return run


@kernel("SparseConcat")
def _concat(ctx: KernelContext):
    n = int(ctx.attr("N"))
    axis = int(ctx.attr("concat_dim"))

    def run(*args: Any) -> tuple[Any, Any, Any]:
        inds, vals, shapes = args[:n], args[n:2 * n], [dims_of(s) for s in args[2 * n:]]
        rank = len(shapes[0])
        ax = axis + rank if axis < 0 else axis
        out = list(shapes[0])
        for s in shapes[1:]:
            if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, out)) if i != ax):
                raise InvalidArgumentError(f"SparseConcat: input shapes {shapes} must match except "
                                           f"in the concat dimension {axis}")
        offset, parts = 0, []
        for ind, s in zip(inds, shapes):
            shifted = ind.clone()
            shifted[:, ax] += offset
            parts.append(shifted)
            offset += s[ax]
        out[ax] = offset
        indices = torch.cat(parts)
        perm = torch.argsort(linearize(indices, out), stable=True)
        return indices[perm], take(cat_values(list(vals)), perm), shape_tensor(out, args[2 * n])

    return run


@kernel("SparseSplit")
def _split(ctx: KernelContext):
    num = int(ctx.attr("num_split"))

    def run(split_dim: Any, indices: Any, values: Any, shape: Any) -> tuple[Any, ...]:
        dims = dims_of(shape)
        ax = int(split_dim)
        ax = ax + len(dims) if ax < 0 else ax
        if not 0 <= ax < len(dims) or dims[ax] < num:
            raise InvalidArgumentError(f"SparseSplit: cannot split dimension {int(split_dim)} of dense "
                                       f"shape {dims} into {num} parts")
        base, extra = divmod(dims[ax], num)
        sizes = [base + (1 if i < extra else 0) for i in range(num)]
        out_i, out_v, out_s, start = [], [], [], 0
        for size in sizes:
            keep = ((indices[:, ax] >= start) & (indices[:, ax] < start + size)).nonzero().reshape(-1)
            piece = indices[keep].clone()
            piece[:, ax] -= start
            out_i.append(piece)
            out_v.append(take(values, keep))
            out_s.append(shape_tensor(dims[:ax] + [size] + dims[ax + 1:], shape))
            start += size
        return (*out_i, *out_v, *out_s)

    return run


@kernel("SparseFillEmptyRows")
def _fill_empty_rows(ctx: KernelContext):
    def run(indices: Any, values: Any, shape: Any, default: Any) -> tuple[Any, Any, Any, Any]:
        dims = dims_of(shape)
        check_bounds("SparseFillEmptyRows", indices, dims)
        rows = dims[0]
        counts = torch.bincount(indices[:, 0], minlength=rows) if indices.shape[0] else \
            torch.zeros(rows, dtype=torch.long)
        empty = counts == 0
        empty_rows = empty.nonzero().reshape(-1)
        filler = torch.zeros((empty_rows.numel(), len(dims)), dtype=indices.dtype)
        filler[:, 0] = empty_rows
        all_idx = torch.cat([indices, filler])
        perm = torch.argsort(all_idx[:, 0], stable=True)
        default_vals = take(default.reshape(1) if hasattr(default, "reshape") else default,
                            torch.zeros(empty_rows.numel(), dtype=torch.long))
        out_vals = take(cat_values([values, default_vals]), perm)
        reverse = torch.empty_like(perm)
        reverse[perm] = torch.arange(perm.numel())
        return all_idx[perm], out_vals, empty, reverse[:indices.shape[0]]

    return run


@kernel("SparseSliceGrad")
def _slice_grad(ctx: KernelContext):
    def run(grad: Any, indices: Any, start: Any, out_indices: Any) -> Any:
        shifted = indices - start.reshape(1, -1)
        result = torch.zeros(indices.shape[0], dtype=grad.dtype)
        if out_indices.shape[0] == 0:
            return result
        dims = (torch.cat([shifted.clamp(min=0), out_indices]).max(0).values + 1).tolist()
        inside = (shifted >= 0).all(1)
        lin_in, lin_out = linearize(shifted.clamp(min=0), dims), linearize(out_indices, dims)
        order = torch.argsort(lin_out)
        pos = torch.searchsorted(lin_out[order], lin_in).clamp(max=lin_out.numel() - 1)
        hit = inside & (lin_out[order][pos] == lin_in)
        result[hit] = grad[order[pos[hit]]]
        return result

    return run
