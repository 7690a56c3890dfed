"""When the engine speculates: the policy around ``speculation.py``'s single guess.

After enough consecutive negotiated cycles that each ran the same single all-reduce (not
inline, not streamed) and left nothing pending, every rank agrees to guess that the next
cycle is that all-reduce again (every input here is the same on every rank, so every rank
decides alike, in the same cycle). A wrong guess doubles the streak needed next time (up
to 64); twice that many right guesses in a row halve it again (down to 2), so a training
loop with a different collective now and then (evaluation, logging) keeps speculating.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.collective.negotiation import Descriptor, check_agreement
from flowmesh.collective.speculation import Guess, can_speculate

_START_STREAK = 2
_MAX_STREAK = 64


class SpeculationPolicy:
    """The guess every rank of a group agrees on, or None.

    Args:
        size: the group's size (a group of one never speculates).
    """

    def __init__(self, size: int):
        self.size = size
        self.guess: Guess | None = None
        self._last_single: Descriptor | None = None
        self._streak = 0  # consecutive cycles that ran that same single all-reduce
        self._streak_needed = _START_STREAK  # doubles after every wrong guess
        self._right_guesses = 0  # since the last change of _streak_needed

    def observe(self, ready: Sequence[Any], table_empty: bool, descriptors_per_rank: list[int],
                streamed: Callable[[str], bool]) -> None:
        """Counts a negotiated cycle: ``ready`` its collectives, ``table_empty`` nothing
        left pending, ``descriptors_per_rank`` how many requests each rank sent."""
        single = None
        if (self.size > 1 and len(ready) == 1 and table_empty
                and not streamed(ready[0].key) and not ready[0].inline[0]
                and can_speculate(ready[0].descriptors[0]) and check_agreement(ready[0]) is None
                and all(n == 1 for n in descriptors_per_rank)):
            single = ready[0].descriptors[0]
        self._streak = self._streak + 1 if single is not None and single == self._last_single else 1
        self._last_single = single
        if single is not None and self._streak >= self._streak_needed:
            self.guess = Guess(single, self.size)

    def right(self) -> None:
        """Every rank matched the guess: a long run earns back half the backoff."""
        self._right_guesses += 1
        if self._right_guesses >= 2 * self._streak_needed and self._streak_needed > _START_STREAK:
            self._streak_needed //= 2
            self._right_guesses = 0

    def wrong(self) -> None:
        """A rank's request differed: stop guessing; twice as many cycles before the next."""
        self.guess = self._last_single = None
        self._streak, self._streak_needed = 0, min(2 * self._streak_needed, _MAX_STREAK)
        self._right_guesses = 0
