"""``tf.distribute.InputContext``: which input pipeline an ``input_fn`` builds.

A strategy calls an ``input_fn`` that takes ``input_context`` once per input pipeline (one
per worker process under ``MultiWorkerMirroredStrategy``, one per process under
``MirroredStrategy``); the function shards its data by ``input_pipeline_id`` and sizes its
batch with :meth:`InputContext.get_per_replica_batch_size`.

Example:
    >>> def input_fn(input_context):
    ...     batch = input_context.get_per_replica_batch_size(64)
    ...     ds = tf.data.Dataset.from_tensor_slices((x, y))
    ...     return ds.shard(input_context.num_input_pipelines,
    ...                     input_context.input_pipeline_id).batch(batch).repeat()
"""

from __future__ import annotations


class InputContext:
    """Where one input pipeline sits among all of them.

    Args:
        num_input_pipelines: how many pipelines feed the replicas (worker processes).
        input_pipeline_id: this pipeline's index, ``0 <= id < num_input_pipelines``.
        num_replicas_in_sync: replicas whose gradients are combined at every step.

    Raises:
        ValueError: an id out of range or a non-positive count.
    """

    def __init__(self, num_input_pipelines: int = 1, input_pipeline_id: int = 0,
                 num_replicas_in_sync: int = 1):
        if num_input_pipelines < 1 or num_replicas_in_sync < 1:
            raise ValueError(f"InputContext needs positive counts, got num_input_pipelines="
                             f"{num_input_pipelines}, num_replicas_in_sync={num_replicas_in_sync}")
        if not 0 <= input_pipeline_id < num_input_pipelines:
            raise ValueError(f"InputContext: input_pipeline_id {input_pipeline_id} is not in "
                             f"[0, {num_input_pipelines})")
        self._num_input_pipelines = int(num_input_pipelines)
        self._input_pipeline_id = int(input_pipeline_id)
        self._num_replicas_in_sync = int(num_replicas_in_sync)

    @property
    def num_input_pipelines(self) -> int:
        return self._num_input_pipelines

    @property
    def input_pipeline_id(self) -> int:
        return self._input_pipeline_id

    @property
    def num_replicas_in_sync(self) -> int:
        return self._num_replicas_in_sync

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """``global_batch_size`` split over the replicas in sync.

        Raises:
            ValueError: the global batch does not divide evenly.
        """
        if global_batch_size % self._num_replicas_in_sync:
            raise ValueError(f"The global batch size {global_batch_size} is not divisible by "
                             f"num_replicas_in_sync {self._num_replicas_in_sync}")
        return global_batch_size // self._num_replicas_in_sync

    def __repr__(self) -> str:
        return (f"InputContext(num_input_pipelines={self._num_input_pipelines}, input_pipeline_id="
                f"{self._input_pipeline_id}, num_replicas_in_sync={self._num_replicas_in_sync})")
