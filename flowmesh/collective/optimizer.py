"""``hvd.DistributedOptimizer``: average gradients over all ranks before applying them.

``compute_gradients`` asks the wrapped optimizer for the local gradients, then reduces
them across ranks with **tensor fusion** and **overlap**:

* gradients are ordered as backprop produces them (by the creation order of the ops
  computing them: last layer first) and packed into buckets of at most
  ``FLOWMESH_BUCKET_MB`` (per dtype, after compression);
* each bucket is one ``CollectiveAllReduceStart`` op, scheduled as soon as the bucket's
  last gradient exists, so its transfer runs on the engine thread while backprop
  computes the earlier layers; a ``CollectiveWait`` per bucket, scheduled as late as
  possible, hands the results to ``apply_gradients``.

With ``backward_passes_per_step=k`` gradients are summed locally for ``k`` runs of the
train op and all-reduced and applied on every k-th run only (``tf.cond``); the global
step then counts applied updates.

Example:
    >>> hvd.init()
    >>> opt = hvd.DistributedOptimizer(tf.train.AdagradOptimizer(0.01 * hvd.size()))
    >>> train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flowmesh.collective import functions
from flowmesh.collective.backends.base import ReduceOp
from flowmesh.collective.compression import Compression, Compressor
from flowmesh.collective.gradients import ReduceConfig, allreduce_gradients
from flowmesh.core.graph import Operation
from flowmesh.train.optimizer import Optimizer


class DistributedOptimizer(Optimizer):
    """Wraps ``optimizer`` so that gradients are reduced across ranks (Horovod's API).

    Args:
        optimizer: any ``tf.train.Optimizer``.
        name: optimizer name (default ``Distributed<Inner>``).
        use_locking: passed to the base class.
        device_dense, device_sparse: device scopes of the reduction ops.
        compression: ``Compression.none`` (default), ``.fp16`` or ``.bf16``.
        sparse_as_dense: densify IndexedSlices gradients and all-reduce them (else they
            are all-gathered).
        backward_passes_per_step: accumulate this many local gradients per update.
        op: ``Average`` (default) or ``Sum``.
        gradient_predivide_factor: with ``op=Average``, divide by this before the sum and
            by ``size / factor`` after it (helps fp16 range).
        average_aggregated_gradients: divide accumulated gradients by
            ``backward_passes_per_step``.
        bucket_size_mb: *(flowmesh)* gradient bucket size; default ``FLOWMESH_BUCKET_MB``
            (0 = one bucket per gradient).
        num_groups, groups: Horovod's explicit grouping; not supported (buckets by size
            replace it): anything but the defaults raises.

    Raises:
        ValueError: an unsupported ``op``, a non-positive ``backward_passes_per_step``, or
            ``num_groups``/``groups`` given.
    """

    def __init__(self, optimizer: Optimizer, name: str | None = None, use_locking: bool = False,
                 device_dense: str = "", device_sparse: str = "",
                 compression: type[Compressor] = Compression.none, sparse_as_dense: bool = False,
                 backward_passes_per_step: int = 1, op: Any = functions.Average,
                 gradient_predivide_factor: float = 1.0,
                 average_aggregated_gradients: bool = False, num_groups: int = 0,
                 groups: Any = None, bucket_size_mb: float | None = None):
        super().__init__(use_locking, name or f"Distributed{type(optimizer).__name__}")
        self._optimizer = optimizer
        self._op = ReduceOp.parse(op)
        if self._op not in (ReduceOp.MEAN, ReduceOp.SUM):
            raise ValueError(f"DistributedOptimizer reduces gradients with Average or Sum, not "
                             f"{self._op.value}")
        if int(backward_passes_per_step) < 1:
            raise ValueError(f"backward_passes_per_step must be >= 1, got {backward_passes_per_step}")
        if num_groups or groups is not None:
            raise ValueError(
                "DistributedOptimizer(num_groups=..., groups=...) is not supported: flowmesh "
                "fuses gradients into buckets by size, in backprop order; set bucket_size_mb "
                "(or FLOWMESH_BUCKET_MB; 0 = one bucket per gradient) to control the fusion")
        self._device_dense = device_dense
        self._device_sparse = device_sparse
        self._compression = compression
        self._sparse_as_dense = sparse_as_dense
        self._passes = int(backward_passes_per_step)
        self._predivide = float(gradient_predivide_factor)
        self._average_aggregated = average_aggregated_gradients
        self._threshold = None if bucket_size_mb is None else int(bucket_size_mb * (1 << 20))
        self._aggregation: dict[str, Any] | None = None

    # --- the Optimizer interface ----------------------------------------------------------
    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Any, Any]]:
        """The wrapped optimizer's gradients, reduced over ranks (or accumulated locally
        when ``backward_passes_per_step > 1``)."""
        gradients = self._optimizer.compute_gradients(*args, **kwargs)
        if self._passes > 1:
            from flowmesh.collective.aggregation import accumulate

            self._aggregation = accumulate(gradients, self._passes)
            return self._aggregation["grads_and_vars"]
        return self.reduce_gradients(gradients)

    def apply_gradients(self, grads_and_vars: Sequence[tuple[Any, Any]],
                        global_step: Any = None, name: str | None = None) -> Operation:
        """Applies the reduced gradients with the wrapped optimizer."""
        if self._passes > 1 and self._aggregation is not None:
            from flowmesh.collective.aggregation import apply_every

            return apply_every(self, self._aggregation, list(grads_and_vars), global_step, name)
        return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, var: Any, name: str) -> Any:
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self) -> list[str]:
        return self._optimizer.get_slot_names()

    def variables(self) -> list[Any]:
        return self._optimizer.variables()

    @property
    def wrapped(self) -> Optimizer:
        """The optimizer that applies the reduced gradients."""
        return self._optimizer

    # --- reduction ------------------------------------------------------------------------
    def reduce_gradients(self, gradients: Sequence[tuple[Any, Any]],
                         scale: float = 1.0) -> list[tuple[Any, Any]]:
        """All-reduces the non-None gradients of ``(gradient, variable)`` pairs (fused,
        overlapped); ``scale`` multiplies them first (e.g. ``1/k`` after accumulation)."""
        from flowmesh.collective.elastic.rendezvous import is_elastic

        gradients = list(gradients)
        size = functions.size()
        elastic = is_elastic()  # the size may change later: always build the reduction
        if size == 1 and scale == 1.0 and not elastic:
            return gradients
        if elastic and self._predivide != 1.0:
            raise ValueError("gradient_predivide_factor bakes the group size into the graph; "
                             "it is not supported in an elastic job (the size changes): "
                             "leave it at 1.0")
        config = ReduceConfig(
            op=self._op, group_size=size, compression=self._compression,
            threshold=self._threshold, predivide=self._predivide,
            sparse_as_dense=self._sparse_as_dense, device_dense=self._device_dense,
            device_sparse=self._device_sparse)
        return allreduce_gradients(gradients, config, scale, name=f"{self._name}_Allreduce")
