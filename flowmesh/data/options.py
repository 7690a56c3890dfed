"""``tf.data.Options``: settings attached to a dataset with ``with_options``.

Read by flowmesh: ``deterministic`` / ``experimental_deterministic`` (``False`` lets
parallel ``map`` return elements in completion order) and
``experimental_distribute.auto_shard_policy`` (see ``data/sharding.py``) and
``experimental_worker_process`` (flowmesh's own: ``True``/``False`` runs the stages below an
iterator's outermost ``prefetch`` in a forked worker process or on threads; ``None`` follows
``FLOWMESH_DATA_WORKER_PROCESS``, off by default, see ``kernels/pipeline/worker_process.py``).
The other options (``data/option_groups.py``) are typed and merged as TensorFlow's and have
no effect.
"""

from __future__ import annotations

from typing import Any, ClassVar

from flowmesh.data.option_groups import (
    AutoShardPolicy,
    AutotuneOptions,
    DistributeOptions,
    ExternalStatePolicy,
    OptimizationOptions,
    Option,
    OptionsBase,
    ServiceOptions,
    ThreadingOptions,
    _none,
)


class Options(OptionsBase):
    """Dataset options: each reads TensorFlow's default until set (``None``: the runtime's
    choice)."""

    _OPTIONS: ClassVar[dict[str, Option]] = {
        "autotune": (AutotuneOptions, AutotuneOptions),
        "deterministic": (bool, _none),
        "experimental_deterministic": (bool, _none),
        "experimental_distribute": (DistributeOptions, DistributeOptions),
        "experimental_external_state_policy": (ExternalStatePolicy, _none),
        "experimental_optimization": (OptimizationOptions, OptimizationOptions),
        "experimental_slack": (bool, _none),
        "experimental_symbolic_checkpoint": (bool, _none),
        "experimental_service": (ServiceOptions, ServiceOptions),
        "experimental_warm_start": (bool, _none),
        "experimental_worker_process": (bool, _none),
        "dataset_name": (str, _none),
        "framework_type": (list, _none),
        "threading": (ThreadingOptions, ThreadingOptions),
    }

    @property
    def experimental_threading(self) -> ThreadingOptions:
        """The same group as ``threading`` (TensorFlow's deprecated name)."""
        return self.threading

    @experimental_threading.setter
    def experimental_threading(self, value: ThreadingOptions) -> None:
        self.threading = value

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "experimental_threading":
            name = "threading"
        super().__setattr__(name, value)

    def determinism(self) -> bool | None:
        """The effective ``deterministic`` setting (``None``: not set)."""
        if self.deterministic is not None:
            return bool(self.deterministic)
        if self.experimental_deterministic is not None:
            return bool(self.experimental_deterministic)
        return None

    def merge(self, other: Options) -> Options:
        """These options overridden by the values ``other`` sets."""
        out = self.merged(other)
        assert isinstance(out, Options)
        return out


__all__ = ["AutoShardPolicy", "Options"]
