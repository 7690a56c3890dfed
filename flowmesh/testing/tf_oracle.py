"""TensorFlow as a test oracle: ``tensorflow.compat.v1`` loaded once per process.

TensorFlow is never a runtime dependency of flowmesh; it is the reference the tests
compare against when it is installed (the ``dev`` extra installs ``tensorflow-cpu``).
Importing it costs seconds, so :func:`load_tensorflow` does it at most once per process
(per pytest session) and caches the outcome, including "not installed".

Example::

    from flowmesh.testing.tf_oracle import require_tensorflow

    def test_against_tf():
        tf1 = require_tensorflow()      # pytest.skip()s cleanly when TF is missing
        with tf1.Graph().as_default() as g, tf1.Session(graph=g, config=session_config(tf1)):
            ...
"""

from __future__ import annotations

import functools
from typing import Any


@functools.cache
def load_tensorflow() -> Any:
    """``tensorflow.compat.v1`` with eager execution disabled, or None if not importable.

    The import and ``disable_eager_execution()`` happen once per process; later calls
    return the cached module (or None). Sessions made without :func:`session_config` (tf-keras
    makes its own) skip Grappler too, as that config does: the oracle's graphs run a few
    times, so rewriting them costs more than it saves.
    """
    try:
        import tensorflow.compat.v1 as tf1
    except Exception:  # noqa: BLE001 - any import failure means "no oracle"
        return None
    tf1.disable_eager_execution()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    tf1.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
    return tf1


def tensorflow_available() -> bool:
    """True when ``tensorflow.compat.v1`` can be imported (imports it once)."""
    return load_tensorflow() is not None


def require_tensorflow() -> Any:
    """The cached ``tensorflow.compat.v1`` module; skips the calling pytest test without it."""
    tf1 = load_tensorflow()
    if tf1 is None:
        import pytest

        pytest.skip("tensorflow is not installed; the TensorFlow oracle comparison is skipped")
    return tf1


def bfloat16_unsupported_reason() -> str | None:
    """Why the oracle cannot run bfloat16 kernels in this process, or None when it can.

    TensorFlow 2.21 picks its oneDNN bfloat16 kernels from the CPU's own features; when
    ``ONEDNN_MAX_CPU_ISA`` caps oneDNN below them (a way to test other CPU code paths),
    oneDNN refuses the kernel: MatMul crashes the process (SIGSEGV), Softmax fails.
    """
    from flowmesh import config

    capped = config.ONEDNN_MAX_CPU_ISA.get().upper() not in ("", "ALL", "DEFAULT")
    if capped and config.TF_ENABLE_ONEDNN_OPTS.get() != "0":
        return (f"ONEDNN_MAX_CPU_ISA={config.ONEDNN_MAX_CPU_ISA.get()} breaks TensorFlow's "
                "oneDNN bfloat16 kernels (MatMul segfaults); the TensorFlow comparison of "
                "bfloat16 ops is skipped (set TF_ENABLE_ONEDNN_OPTS=0 to run it on Eigen)")
    return None


def session_config(tf1: Any) -> Any:
    """A single-threaded ``ConfigProto`` without graph rewriting: oracle graphs are tiny and
    run once, so Grappler's optimization passes would cost more than the run itself."""
    config = tf1.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return config
