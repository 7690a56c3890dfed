"""The default session stack (``with sess.as_default()``), per thread.

It lives in the core so ``Tensor.eval`` and ``Operation.run`` find the default session
without importing the runtime: a session object only needs a ``run(fetches, feed_dict)``
method here. ``runtime/session.py`` pushes and pops sessions.
"""

from __future__ import annotations

import threading
from typing import Any

_thread_state = threading.local()


def session_stack() -> list[Any]:
    """The calling thread's stack of default sessions (innermost last)."""
    stack = getattr(_thread_state, "stack", None)
    if stack is None:
        stack = _thread_state.stack = []
    return stack


def get_default_session() -> Any:
    """The innermost default session of the calling thread, or None."""
    stack = session_stack()
    return stack[-1] if stack else None


def get_default_session_or_raise() -> Any:
    """The default session; ``ValueError`` saying how to install one when there is none."""
    session = get_default_session()
    if session is None:
        raise ValueError(
            "Cannot evaluate tensor using `eval()`: No default session is registered. Use "
            "`with sess.as_default()` or pass an explicit session to `eval(session=sess)`"
        )
    return session
