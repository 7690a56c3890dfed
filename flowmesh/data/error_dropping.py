"""``tf.data.experimental.ignore_errors``: elements whose ``map`` or ``filter`` function
fails are dropped instead of ending the pipeline with the error.

The ``map`` / ``filter`` stages below the point where ``ignore_errors`` is applied (the
chain of stages down to the first one that is neither, or the source) are rebuilt with the
``ignore_errors`` attr; their kernels then drop an element whose function raises an
``OpError`` (``kernels/pipeline/base.py``). Where flowmesh differs: errors of other stages
(a corrupt record in a file reader, a generator that raises) still end the pipeline.
"""

from __future__ import annotations

from collections.abc import Callable

from flowmesh.core.graph import Operation
from flowmesh.data.dataset import Dataset
from flowmesh.ops._builders import make_tensor

Transform = Callable[[Dataset], Dataset]
_FUNCTION_STAGES = frozenset({"MapDataset", "ParallelMapDatasetV2", "FilterDataset"})
_PASS_THROUGH = frozenset({"PrefetchDataset", "OptionsDataset", "CacheDataset", "ShuffleDataset", "RepeatDataset",
                           "TakeDataset", "SkipDataset", "ShardDataset", "BatchDatasetV2", "PaddedBatchDatasetV2",
                           "UnbatchDataset"})


def _chain(dataset: Dataset) -> list[Operation]:
    """The stages from the top down to the last map/filter reachable through pass-through
    stages (first input only)."""
    ops, op = [], dataset._variant_tensor.op
    while op.type in _FUNCTION_STAGES or op.type in _PASS_THROUGH:
        ops.append(op)
        if not op.inputs:
            break
        op = op.inputs[0].op
    while ops and ops[-1].type not in _FUNCTION_STAGES:
        ops.pop()
    return ops


def ignore_errors(log_warning: bool = False) -> Transform:
    """Drops the elements on which a ``map`` or ``filter`` function (below this point)
    fails; with ``log_warning`` each is logged."""
    def apply(dataset: Dataset) -> Dataset:
        chain = _chain(dataset)
        if not chain:
            return dataset
        variant = chain[-1].inputs[0]
        for op in reversed(chain):
            attrs = dict(op.attrs)
            if op.type in _FUNCTION_STAGES:
                attrs.update({"ignore_errors": True, "log_warning": bool(log_warning)})
            variant = make_tensor(op.type, [variant, *op.inputs[1:]], attrs, name=op.type)
        return Dataset(variant, dataset.element_spec, dataset.options())

    return apply
