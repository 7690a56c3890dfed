"""Kernel of ``StringNGrams``: TensorFlow's ``string_ngrams_op.cc`` per row (padding capped at
``width - 1``, pads only at the ends, a short row kept whole when ``preserve_short_sequences``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


class _NGrams:
    def __init__(self, ctx: KernelContext):
        attrs = ctx.op.attrs
        self.sep, self.widths = _b(attrs["separator"]), list(attrs["ngram_widths"])
        self.left, self.right = _b(attrs["left_pad"]), _b(attrs["right_pad"])
        self.pad, self.keep_short = attrs["pad_width"], attrs["preserve_short_sequences"]

    def pad_width(self, width: int) -> int:
        return min(width - 1 if self.pad < 0 else self.pad, width - 1)

    def count(self, length: int, width: int) -> int:
        return max(0, length + 2 * self.pad_width(width) - width + 1)

    def make(self, tokens: list[bytes], count: int, width: int) -> list[bytes]:
        pad, out = self.pad_width(width), []
        for index in range(count):
            left = max(0, pad - index)
            right = max(0, pad - (count - (index + 1)))
            n_tokens = width - left - right
            start = 0 if left > 0 else index - pad
            words = [self.left] * left + tokens[start:start + n_tokens] + [self.right] * right
            out.append(self.sep.join(words))
        return out

    def row(self, tokens: list[bytes]) -> list[bytes]:
        out: list[bytes] = []
        for width in self.widths:
            out += self.make(tokens, self.count(len(tokens), width), width)
        if self.keep_short and not out and tokens:
            out = self.make(tokens, 1, len(tokens) + 2 * max(self.pad, 0))
        return out


def _b(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


@kernel("StringNGrams", device_types=("CPU",))
def _string_ngrams(ctx: KernelContext):
    grams = _NGrams(ctx)

    def run(data: Any, splits: torch.Tensor) -> tuple[np.ndarray, torch.Tensor]:
        tokens = [bytes(t) for t in np.asarray(data, dtype=object).reshape(-1)]
        bounds = splits.cpu().numpy()
        if bounds.size == 0 or bounds[0] != 0 or bounds[-1] != len(tokens):
            raise InvalidArgumentError(f"StringNGrams ({ctx.op.name}): data_splits must run from 0 "
                                       f"to {len(tokens)}, got {bounds.tolist()}")
        values, out_splits = [], [0]
        for i in range(bounds.size - 1):
            values += grams.row(tokens[bounds[i]:bounds[i + 1]])
            out_splits.append(len(values))
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out, torch.tensor(out_splits, dtype=splits.dtype)
    return run
