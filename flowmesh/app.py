"""``tf.app``: ``tf.app.run()`` and ``tf.app.flags`` for TensorFlow 1.x scripts."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from flowmesh import flags

__all__ = ["flags", "run"]


def run(main: Callable[[list[str]], Any] | None = None, argv: Sequence[str] | None = None) -> NoReturn:
    """Parses the flags from ``argv`` (default ``sys.argv``), calls ``main`` (default: the
    ``main`` function of the ``__main__`` module) with the arguments that are not defined
    flags, and exits with its return value, as TensorFlow's ``tf.app.run`` (absl's
    ``app.run`` with a parser that tolerates unknown flags).

    Unlike absl's ``app.run``, the root logger keeps its handlers (absl would install its
    own) and ``--help`` is left to the program.

    Raises:
        SystemExit: always; status 1 with a ``FATAL Flags parsing error`` line on stderr when
            a flag's value does not parse.
        ValueError: no ``main`` was given and ``__main__`` defines none.
    """
    if main is None:
        main = getattr(sys.modules["__main__"], "main", None)
        if main is None:
            raise ValueError("tf.app.run() found no main(argv) in the __main__ module; pass main=")
    try:
        args = flags.FLAGS(list(argv) if argv is not None else sys.argv, known_only=True)
    except flags.Error as error:
        sys.stderr.write(f"FATAL Flags parsing error: {error}\n")
        sys.exit(1)
    sys.exit(main(args))
