"""Kernel of ``CTCLoss``: torch's CTC on the log-softmax of the logits, in float64, with the
gradient with respect to the logits from autograd (``flowmesh/ops/ctc_ops.py``)."""

from __future__ import annotations

from typing import Any

import torch

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.contract.registry import KernelContext, kernel


def _targets(indices: torch.Tensor, values: torch.Tensor, batch: int, collapse: bool) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(batch)]
    for (row, _), value in zip(indices.tolist(), values.tolist()):
        if not 0 <= row < batch:
            raise InvalidArgumentError(f"CTCLoss: label row {row} is outside the batch of {batch}")
        if not (collapse and labels[row] and labels[row][-1] == value):
            labels[row].append(value)
    return labels


@kernel("CTCLoss", device_types=("CPU",))
def _ctc_loss(ctx: KernelContext):
    collapse = bool(ctx.attr("preprocess_collapse_repeated", False))
    ignore_longer = bool(ctx.attr("ignore_longer_outputs_than_inputs", False))
    blank_attr = ctx.attr("_blank_index", -1)

    def run(logits: torch.Tensor, indices: Any, values: Any, lengths: Any) -> tuple[torch.Tensor, torch.Tensor]:
        steps, batch, classes = logits.shape
        blank = blank_attr % classes
        labels = _targets(indices, values, batch, collapse)
        lengths = [int(n) for n in lengths.tolist()]
        for b, (label, n) in enumerate(zip(labels, lengths)):
            if n > steps:
                raise InvalidArgumentError(f"CTCLoss: sequence_length({b}) = {n} > max_time {steps}")
            if any(not 0 <= v < classes or v == blank for v in label):
                raise InvalidArgumentError(f"CTCLoss: labels of batch {b} must be in [0, {classes}) and not the "
                                           f"blank {blank}: {label}")
            if len(label) > n and not ignore_longer:
                raise InvalidArgumentError(f"CTCLoss: not enough time for target transition sequence (batch {b}: "
                                           f"{len(label)} labels, {n} steps); pass "
                                           "ignore_longer_outputs_than_inputs=True to skip such examples")
        keep = torch.tensor([len(label) <= n for label, n in zip(labels, lengths)])
        x = logits.detach().double().requires_grad_(True)
        flat = torch.tensor([v for label in labels for v in label], dtype=torch.long)
        loss = torch.nn.functional.ctc_loss(
            torch.log_softmax(x, -1), flat, torch.tensor(lengths), torch.tensor([len(lb) for lb in labels]),
            blank=blank, reduction="none", zero_infinity=False)
        loss = torch.where(keep, loss, torch.zeros_like(loss))
        (grad,) = torch.autograd.grad(loss.sum(), x)
        return loss.detach().to(logits.dtype), grad.to(logits.dtype)

    return run
