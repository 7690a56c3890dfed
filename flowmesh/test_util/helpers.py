"""The small ``tf.test`` helpers: ``main``, ``create_local_cluster`` (in-process servers),
``assert_equal_graph_def``, ``StubOutForTesting``, the build queries and decorators."""

from __future__ import annotations

import functools
import os
import platform
import sys
import unittest
from collections.abc import Callable
from typing import Any

from flowmesh.distributed.ports import free_ports


def main(argv: list[str] | None = None) -> None:
    """Runs the ``unittest`` tests of ``__main__`` (``tf.test.main``); exits with their status."""
    unittest.main(module="__main__", argv=argv if argv is not None else sys.argv)


def create_local_cluster(num_workers: int, num_ps: int, protocol: str = "grpc", worker_config: Any = None,
                         ps_config: Any = None) -> tuple[list, list]:
    """``num_workers`` worker and ``num_ps`` ps servers in this process, on free loopback
    ports: ``(workers, ps_servers)``; ``workers[0].target`` is a session target for the
    whole cluster.

    Example:
        >>> workers, _ = tf.test.create_local_cluster(2, 1)
        >>> with tf.device("/job:ps/task:0"): v = tf.Variable(0.0)
        >>> with tf.Session(workers[0].target) as sess: sess.run(v.initializer)

    Raises:
        ValueError: ``protocol`` is not ``"grpc"``.
    """
    from flowmesh.distributed.cluster_spec import ClusterSpec
    from flowmesh.distributed.server import Server

    if protocol != "grpc":
        raise ValueError(f"create_local_cluster: protocol must be 'grpc', got {protocol!r}")
    ports = iter(free_ports(num_workers + num_ps))
    spec = {"worker": [f"localhost:{next(ports)}" for _ in range(num_workers)],
            "ps": [f"localhost:{next(ports)}" for _ in range(num_ps)]}
    cluster = ClusterSpec(spec)
    workers = [Server(cluster, job_name="worker", task_index=i, config=worker_config, start=True)
               for i in range(num_workers)]
    ps_servers = [Server(cluster, job_name="ps", task_index=i, config=ps_config, start=True) for i in range(num_ps)]
    return workers, ps_servers


def _node_map(graph_def: Any) -> dict[str, Any]:
    return {node.name: node for node in graph_def.node}


def assert_equal_graph_def(expected: Any, actual: Any, checkpoint_v2: bool = False,
                           hash_table_shared_name: bool = False) -> None:
    """Raises ``AssertionError`` naming the first difference when two ``GraphDef``s differ
    (nodes compared by name, in any order).

    Raises:
        TypeError: either argument is not a GraphDef.
    """
    from flowmesh.protos.graph import GraphDef

    for value, what in ((expected, "expected"), (actual, "actual")):
        if not isinstance(value, GraphDef):
            raise TypeError(f"assert_equal_graph_def: {what} must be a GraphDef, got {type(value).__name__}")
    ours, theirs = _node_map(actual), _node_map(expected)
    missing, extra = sorted(set(theirs) - set(ours)), sorted(set(ours) - set(theirs))
    if missing or extra:
        raise AssertionError(f"Only in expected: {missing}. Only in actual: {extra}.")
    for name in sorted(theirs):
        if theirs[name] != ours[name]:
            raise AssertionError(f"Node {name!r} differs:\nexpected:\n{theirs[name]}\nactual:\n{ours[name]}")


class StubOutForTesting:
    """Replaces attributes for the duration of a test and puts them back
    (``Set``/``SmartSet``, then ``UnsetAll``/``SmartUnsetAll``/``CleanUp``)."""

    def __init__(self) -> None:
        self.cache: list[tuple[Any, Any, str]] = []
        self.stubs: list[tuple[Any, str, Any, bool]] = []

    def __enter__(self) -> StubOutForTesting:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.CleanUp()

    def CleanUp(self) -> None:  # noqa: N802 - TensorFlow's name
        self.SmartUnsetAll()
        self.UnsetAll()

    def SmartSet(self, obj: Any, attr_name: str, new_attr: Any) -> None:  # noqa: N802
        """Sets ``obj.attr_name`` and remembers whether it was the object's own attribute."""
        had_own = attr_name in getattr(obj, "__dict__", {})
        self.stubs.append((obj, attr_name, getattr(obj, attr_name, None), had_own))
        setattr(obj, attr_name, new_attr)

    def SmartUnsetAll(self) -> None:  # noqa: N802
        for obj, attr_name, old, had_own in reversed(self.stubs):
            if had_own:
                setattr(obj, attr_name, old)
            else:
                delattr(obj, attr_name)
        self.stubs = []

    def Set(self, parent: Any, child_name: str, new_child: Any) -> None:  # noqa: N802
        """Replaces ``parent.child_name`` (which must exist)."""
        old = getattr(parent, child_name)
        if isinstance(parent.__dict__.get(child_name) if hasattr(parent, "__dict__") else None, staticmethod):
            old = staticmethod(old)
        self.cache.append((parent, old, child_name))
        setattr(parent, child_name, new_child)

    def UnsetAll(self) -> None:  # noqa: N802
        for parent, old, child_name in reversed(self.cache):
            setattr(parent, child_name, old)
        self.cache = []


def disable_with_predicate(pred: Callable[[], bool], skip_message: str) -> Callable:
    """A decorator that skips the test (``unittest.SkipTest``) when ``pred()`` is true."""
    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)
        return wrapper
    return decorator


def with_eager_op_as_function(cls: Any = None, only_as_function: bool = False) -> Any:
    """TensorFlow adds eager "op as function" variants of each test; flowmesh runs graph
    mode only, so the class (or decorator) is returned unchanged."""
    if cls is None:
        return lambda c: c
    return cls


def is_built_with_rocm() -> bool:
    """False: flowmesh's kernel library (torch) is used through CUDA or the CPU."""
    return False


def is_built_with_xla() -> bool:
    """False: flowmesh does not compile graphs with XLA."""
    return False


_CPU_TARGETS = {"x86": ("x86_64", "amd64", "i386", "i686"), "x86_64": ("x86_64", "amd64"),
                "aarch64": ("aarch64", "arm64"), "arm": ("arm", "armv7l", "aarch64", "arm64"),
                "powerpc": ("ppc64le", "ppc64"), "s390x": ("s390x",)}


def is_cpu_target_available(target: str) -> bool:
    """Whether kernels run on CPU target ``target`` (``"x86"``, ``"aarch64"``, ...): the
    machine's own architecture (flowmesh does no cross-compilation)."""
    return platform.machine().lower() in _CPU_TARGETS.get(target.lower(), (target.lower(),))


def test_src_dir_path(relative_path: str) -> str:
    """``relative_path`` under the directory holding the ``flowmesh`` package (TensorFlow's
    is under its source tree's root)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, relative_path)


def sync_devices() -> None:
    """``tf.test.experimental.sync_devices``: TensorFlow allows it in eager mode only and
    raises ``RuntimeError`` in graph mode, flowmesh's only mode."""
    raise RuntimeError("sync_devices() must only be called in Eager mode.")
