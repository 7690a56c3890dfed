"""Kernels of ``flowmesh/ops/string_ops.py``: NumPy object arrays of ``bytes``, elementwise."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.convert import torch_dtype
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _objects(value: Any) -> np.ndarray:
    return value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)


def _map(fn: Any, *arrays: Any, out_dtype: Any = object) -> np.ndarray:
    """``fn`` over broadcast elements; returns an array of ``out_dtype``."""
    values = np.broadcast_arrays(*[_objects(a) if not isinstance(a, torch.Tensor) else a.numpy()
                                   for a in arrays])
    out = np.empty(values[0].shape, dtype=out_dtype)
    for index in np.ndindex(out.shape):
        out[index] = fn(*[v[index] for v in values])
    return out


@kernel("StringJoin")
def _join(ctx: KernelContext):
    sep = ctx.attr("separator").encode()
    return lambda *xs: _map(lambda *parts: sep.join(parts), *xs)


@kernel("ReduceJoin")
def _reduce_join(ctx: KernelContext):
    axes, keep, sep = ctx.attr("axis"), ctx.attr("keep_dims"), ctx.attr("separator").encode()

    def run(x: Any) -> Any:
        x = _objects(x)
        dims = tuple(range(x.ndim)) if axes is None else tuple(sorted(a % max(x.ndim, 1) for a in axes))
        rest = [d for d in range(x.ndim) if d not in dims]
        moved = np.transpose(x, rest + list(dims)).reshape([x.shape[d] for d in rest] + [-1])
        out = _map(lambda *row: sep.join(row), *np.moveaxis(moved, -1, 0)) if moved.shape[-1] else \
            np.full(moved.shape[:-1], b"", dtype=object)
        if keep:
            out = out.reshape([1 if d in dims else x.shape[d] for d in range(x.ndim)])
        return out

    return run


@kernel("StringLength")
def _length(ctx: KernelContext):
    chars = ctx.attr("unit") == "UTF8_CHAR"

    def size(s: bytes) -> int:
        return len(s.decode("utf-8")) if chars else len(s)

    return lambda x: torch.from_numpy(_map(size, x, out_dtype=np.int32))


@kernel("Substr")
def _substr(ctx: KernelContext):
    def cut(s: bytes, pos: Any, n: Any) -> bytes:
        pos, n = int(pos), int(n)
        start = pos if pos >= 0 else len(s) + pos
        if not 0 <= start <= len(s):
            raise InvalidArgumentError(f"pos {pos} out of range for string {s!r}")
        return s[start:start + max(n, 0)]

    return lambda x, pos, n: _map(cut, x, pos, n)


def _simple(op_type: str, fn: Any) -> None:
    kernel(op_type)(lambda ctx: (lambda x: _map(fn, x)))


_simple("StringLower", lambda s: s.lower())
_simple("StringUpper", lambda s: s.upper())
_simple("StringStrip", lambda s: s.strip())


@kernel("RegexFullMatch")
def _regex_full_match(ctx: KernelContext):
    pattern = re.compile(ctx.attr("pattern").encode())
    return lambda x: torch.from_numpy(_map(lambda s: pattern.fullmatch(s) is not None, x, out_dtype=bool))


@kernel("RegexReplace")
def _regex_replace(ctx: KernelContext):
    pattern = re.compile(ctx.attr("pattern").encode())
    rewrite = ctx.attr("rewrite").encode()
    count = 0 if ctx.attr("replace_global") else 1
    return lambda x: _map(lambda s: pattern.sub(rewrite, s, count=count), x)


@kernel("StringToNumber")
def _to_number(ctx: KernelContext):
    target = ctx.attr("out_type")
    parse = float if target.is_floating else int

    def convert(s: bytes) -> Any:
        try:
            return parse(s.decode("utf-8").strip())
        except ValueError:
            raise InvalidArgumentError(f"StringToNumberOp could not correctly convert string: "
                                       f"{s.decode('utf-8', 'replace')}") from None

    return lambda x: torch.from_numpy(_map(convert, x, out_dtype=target.as_numpy_dtype)).to(torch_dtype(target))


@kernel("AsString")
def _as_string(ctx: KernelContext):
    dtype = ctx.op.inputs[0].dtype
    precision, scientific, shortest = ctx.attr("precision"), ctx.attr("scientific"), ctx.attr("shortest")
    width, fill = ctx.attr("width"), ctx.attr("fill") or " "
    if dtype.is_bool:
        spec = None
    elif dtype.is_floating or dtype.is_complex:
        spec = "g" if shortest else ("e" if scientific else "f")
        spec = (f".{precision}" if precision >= 0 else ("" if shortest else ".6")) + spec
    else:
        spec = "d"

    def fmt(v: Any) -> bytes:
        text = ("true" if v else "false") if spec is None else format(v.item() if hasattr(v, "item") else v, spec)
        if width > 0:
            text = text.rjust(width, fill) if fill != "0" or spec is None else text.zfill(width)
        return text.encode()

    return lambda x: _map(fmt, x.float() if x.dtype in (torch.float16, torch.bfloat16) else x)


@kernel("StringToHashBucketFast")
def _hash_bucket_fast(ctx: KernelContext):
    from flowmesh.kernels.farmhash import fingerprint64

    buckets = ctx.attr("num_buckets")

    def run(x: Any) -> torch.Tensor:
        out = _map(lambda s: fingerprint64(s) % buckets, x, out_dtype=np.int64)
        return torch.from_numpy(out)

    return run
