"""Whether the calling thread's step is a thread-tuner probe of a mode not chosen (yet).

Kernels that tune themselves once per kind (``gemm_choice``) leave such steps alone: a
probe runs a candidate mode (one intra-op thread) for a few steps and most often goes back
to the team, so measuring the candidate's kinds there costs extra products in the very
steps that time the candidate, for a choice that may never be used. The kinds are
measured once the tuner keeps that mode. Torch-free: ``runtime/cpu_policy.py`` sets it.
"""

from __future__ import annotations

import threading

_current = threading.local()


def probing() -> bool:
    """Whether the calling thread runs a probe step of a mode the tuner has not chosen."""
    return getattr(_current, "probing", False)


def set_probing(probing: bool) -> None:
    """Marks the calling thread's next steps as probe steps (or not)."""
    _current.probing = probing
