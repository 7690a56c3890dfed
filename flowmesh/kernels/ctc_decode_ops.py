"""Kernels of ``ops/ctc_decode_ops.py``: greedy (best-path) decoding and TensorFlow's CTC prefix
beam search (``ctc_beam_search.h``: log-softmax per step, beams kept by total probability,
children grown from every beam that could still enter, the dropped bottom beam reset), on the
host in float64, results in the input's dtype."""

from __future__ import annotations

import numpy as np
import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel

_LOG_ZERO = -np.inf


def _inputs(ctx: KernelContext, logits: torch.Tensor, lengths: torch.Tensor) -> tuple:
    x = logits.detach().cpu().double().numpy()
    seq = lengths.detach().cpu().numpy().astype(np.int64)
    if x.ndim != 3 or seq.shape != (x.shape[1],) or (seq > x.shape[0]).any() or (seq < 0).any():
        raise InvalidArgumentError(f"{ctx.op.type} ({ctx.op.name}): need inputs [max_time, batch, "
                                   f"classes] and 0 <= sequence_length <= max_time per example, got "
                                   f"{list(x.shape)} and {seq.tolist()}")
    return x, seq


def _sparse(paths: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    indices = [[b, i] for b, path in enumerate(paths) for i in range(len(path))]
    values = [v for path in paths for v in path]
    width = max((len(p) for p in paths), default=0)
    return (torch.tensor(indices, dtype=torch.int64).reshape(-1, 2),
            torch.tensor(values, dtype=torch.int64), torch.tensor([len(paths), width], dtype=torch.int64))


@kernel("CTCGreedyDecoder", device_types=("CPU",))
def _greedy(ctx: KernelContext):
    merge, blank_attr = ctx.attr("merge_repeated", True), ctx.attr("blank_index", -1)

    def run(logits: torch.Tensor, lengths: torch.Tensor) -> tuple:
        x, seq = _inputs(ctx, logits, lengths)
        blank = blank_attr + x.shape[2] if blank_attr < 0 else blank_attr
        paths, scores = [], np.zeros((x.shape[1], 1))
        for b in range(x.shape[1]):
            path, prev = [], -1
            for t in range(seq[b]):
                label = int(np.argmax(x[t, b]))
                scores[b, 0] -= x[t, b, label]
                if label != blank and not (merge and label == prev):
                    path.append(label)
                prev = label
            paths.append(path)
        return (*_sparse(paths), torch.from_numpy(scores).to(logits.dtype))
    return run


class _Beam:
    """One prefix: its label, parent and log-probabilities (ending in blank / in its label)."""

    __slots__ = ("label", "parent", "children", "old", "new")

    def __init__(self, label: int, parent: _Beam | None):
        self.label, self.parent, self.children = label, parent, {}
        self.old = [_LOG_ZERO, _LOG_ZERO, _LOG_ZERO]  # total, blank, label
        self.new = [_LOG_ZERO, _LOG_ZERO, _LOG_ZERO]

    def active(self) -> bool:
        return self.new[0] != _LOG_ZERO

    def child(self, label: int) -> _Beam:
        if label not in self.children:
            self.children[label] = _Beam(label, self)
        return self.children[label]

    def labels(self, merge: bool) -> list[int]:
        out, prev, node = [], -1, self
        while node.parent is not None:
            if not merge or node.label != prev:
                out.append(node.label)
            prev, node = node.label, node.parent
        return out[::-1]


class _Leaves:
    """TensorFlow's ``TopN`` of beams by total log-probability (the bottom drops when full)."""

    def __init__(self, width: int):
        self.width, self.items = width, []

    def bottom(self) -> _Beam:
        return min(self.items, key=lambda e: e.new[0])

    def push(self, entry: _Beam) -> None:
        if len(self.items) == self.width:
            low = self.bottom()
            if entry.new[0] <= low.new[0]:
                return
            self.items.remove(low)
        self.items.append(entry)

    def sorted(self) -> list[_Beam]:
        return sorted(self.items, key=lambda e: -e.new[0])


def _step(leaves: _Leaves, row: np.ndarray) -> _Leaves:
    logp = row - row.max()
    logp = logp - np.log(np.exp(logp).sum())
    blank = len(row) - 1
    branches, leaves = leaves.sorted(), _Leaves(leaves.width)
    for b in branches:
        b.old = list(b.new)
    for b in branches:
        if b.parent is not None:
            if b.parent.active():
                prev = b.parent.old[1] if b.label == b.parent.label else b.parent.old[0]
                b.new[2] = np.logaddexp(b.new[2], prev)
            b.new[2] += logp[b.label]
        b.new[1] = b.old[0] + logp[blank]
        b.new[0] = np.logaddexp(b.new[1], b.new[2])
        leaves.push(b)

    def candidate(total: float) -> bool:
        return total > _LOG_ZERO and (len(leaves.items) < leaves.width or total > leaves.bottom().new[0])

    for b in branches:
        if not candidate(b.old[0]):
            continue
        for label in range(blank):
            c = b.child(label)
            if c.active():
                continue
            prev = b.old[1] if c.label == b.label else b.old[0]
            c.new = [logp[label] + prev, _LOG_ZERO, logp[label] + prev]
            if candidate(c.new[0]):
                if len(leaves.items) == leaves.width:
                    leaves.bottom().new = [_LOG_ZERO] * 3
                leaves.push(c)
            else:
                c.old, c.new = [_LOG_ZERO] * 3, [_LOG_ZERO] * 3
    return leaves


@kernel("CTCBeamSearchDecoder", device_types=("CPU",))
def _beam_search(ctx: KernelContext):
    width, top, merge = ctx.attr("beam_width"), ctx.attr("top_paths"), ctx.attr("merge_repeated")

    def run(logits: torch.Tensor, lengths: torch.Tensor) -> tuple:
        x, seq = _inputs(ctx, logits, lengths)
        paths = [[] for _ in range(top)]
        scores = np.zeros((x.shape[1], top))
        for b in range(x.shape[1]):
            root = _Beam(-1, None)
            root.new = [0.0, 0.0, _LOG_ZERO]
            leaves = _Leaves(width)
            leaves.push(root)
            for t in range(seq[b]):
                leaves = _step(leaves, x[t, b])
            best = leaves.sorted()
            if len(best) < top:
                raise InvalidArgumentError(f"CTCBeamSearchDecoder ({ctx.op.name}): less leaves in "
                                           f"the beam search ({len(best)}) than top_paths ({top})")
            for i in range(top):
                paths[i].append(best[i].labels(merge))
                scores[b, i] = best[i].new[0]
        parts = [_sparse(p) for p in paths]
        return (*[p[0] for p in parts], *[p[1] for p in parts], *[p[2] for p in parts],
                torch.from_numpy(scores).to(logits.dtype))
    return run



