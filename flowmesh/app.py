"""``tf.app``: ``tf.app.run()`` and ``tf.app.flags`` for TensorFlow 1.x scripts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from flowmesh import flags

__all__ = ["flags", "run"]


def run(main: Callable[[list[str]], Any] | None = None, argv: Sequence[str] | None = None) -> None:
    """Parses the flags from ``argv`` (default ``sys.argv``), calls ``main`` (default: the
    ``main`` function of the ``__main__`` module) with the arguments that are not flags,
    and exits with its return value."""
    args = flags.FLAGS(list(argv) if argv is not None else sys.argv)
    if main is None:
        main = getattr(sys.modules["__main__"], "main", None)
        if main is None:
            raise ValueError("tf.app.run() found no main(argv) in the __main__ module; pass main=")
    sys.exit(main(args))
