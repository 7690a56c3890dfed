"""Kernels of ``ops/unicode_ops.py``: decoding with per-character byte offsets, encoding of
code-point rows and transcoding, with TensorFlow's error modes (an invalid byte sequence, as
Python's codecs delimit it, becomes one ``replacement_char``, is skipped, or fails)."""

from __future__ import annotations

import codecs
from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _codec(ctx: KernelContext, encoding: str) -> str:
    try:
        return codecs.lookup(encoding).name
    except LookupError:
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): unknown encoding "
                                   f"{encoding!r}") from None


def decode(ctx: KernelContext, data: bytes, codec: str) -> tuple[list[int], list[int]]:
    """Code points and their starting byte offsets, with the op's error mode."""
    errors, replacement = ctx.attr("errors"), ctx.attr("replacement_char")
    control = ctx.attr("replace_control_characters", False)
    sizer = {"utf-16": "utf-16-be", "utf-32": "utf-32-be"}.get(codec, codec)  # no BOM per char
    codes, offsets, pos = [], [], 0
    while pos < len(data):
        try:
            text, end = data[pos:].decode(codec), len(data)
            bad = None
        except UnicodeDecodeError as exc:
            text, end = data[pos:pos + exc.start].decode(codec), pos + exc.start
            bad = (end, pos + exc.end)
        cursor = pos
        for ch in text:
            code = ord(ch)
            codes.append(replacement if control and code < 0x20 else code)
            offsets.append(cursor)
            cursor += len(ch.encode(sizer, "surrogatepass"))
        if bad is None:
            break
        if errors == "strict":
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): invalid {codec} bytes "
                                       f"{data[bad[0]:bad[1]]!r} at offset {bad[0]}")
        if errors == "replace":
            codes.append(replacement)
            offsets.append(bad[0])
        pos = bad[1]
    return codes, offsets


def encode(ctx: KernelContext, codes: Any, codec: str) -> bytes:
    errors, replacement = ctx.attr("errors"), ctx.attr("replacement_char")
    out = []
    for code in codes:
        code = int(code)
        if 0 <= code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            out.append(chr(code))
        elif errors == "replace":
            out.append(chr(replacement))
        elif errors == "strict":
            raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): {code} is not a valid "
                                       f"code point")
    return "".join(out).encode(codec)


def _strings(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=object)


@kernel("UnicodeDecodeWithOffsets", device_types=("CPU",))
def _decode_with_offsets(ctx: KernelContext):
    codec = _codec(ctx, ctx.attr("input_encoding"))

    def run(x: Any) -> tuple:
        splits, codes, offsets = [0], [], []
        for item in _strings(x).reshape(-1):
            c, o = decode(ctx, bytes(item), codec)
            codes += c
            offsets += o
            splits.append(len(codes))
        return (torch.tensor(splits, dtype=torch.int64), torch.tensor(codes, dtype=torch.int32),
                torch.tensor(offsets, dtype=torch.int64))
    return run


@kernel("UnicodeEncode", device_types=("CPU",))
def _encode(ctx: KernelContext):
    codec = _codec(ctx, ctx.attr("output_encoding"))

    def run(values: torch.Tensor, splits: torch.Tensor) -> np.ndarray:
        codes, bounds = values.cpu().numpy(), splits.cpu().numpy()
        if bounds.size == 0 or bounds[0] != 0 or bounds[-1] != codes.size or (np.diff(bounds) < 0).any():
            raise InvalidArgumentError(f"UnicodeEncode ({ctx.op.name}): input_splits must run from "
                                       f"0 to {codes.size} without decreasing, got {bounds.tolist()}")
        out = np.empty(bounds.size - 1, dtype=object)
        for i in range(bounds.size - 1):
            out[i] = encode(ctx, codes[bounds[i]:bounds[i + 1]], codec)
        return out
    return run


@kernel("UnicodeTranscode", device_types=("CPU",))
def _transcode(ctx: KernelContext):
    source, target = _codec(ctx, ctx.attr("input_encoding")), _codec(ctx, ctx.attr("output_encoding"))

    def run(x: Any) -> np.ndarray:
        arr = _strings(x)
        out = np.empty(arr.shape, dtype=object)
        for i, item in np.ndenumerate(arr):
            out[i] = encode(ctx, decode(ctx, bytes(item), source)[0], target)
        return out
    return run
