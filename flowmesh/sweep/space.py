"""The search space: grids of values and ranges, parsed from the command line.

    --grid lr=0.1,0.01        a list of values (ints, floats or strings)
    --uniform lr=0.001:0.1    a float range          --loguniform lr=1e-4:1e-1
    --int layers=1:4          an integer range (both ends included)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

KINDS = ("grid", "uniform", "loguniform", "int")


@dataclass(frozen=True)
class Param:
    """One hyperparameter: a name and its grid values or its range."""

    name: str
    kind: str
    values: tuple[Any, ...] = ()
    low: float = 0.0
    high: float = 0.0

    def sample(self, rng: random.Random) -> Any:
        """One value drawn uniformly (a grid value, or from the range)."""
        if self.kind == "grid":
            return rng.choice(self.values)
        if self.kind == "int":
            return rng.randint(int(self.low), int(self.high))
        if self.kind == "loguniform":
            return math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return rng.uniform(self.low, self.high)


def parse(kind: str, text: str) -> Param:
    """``NAME=v1,v2,...`` (grid) or ``NAME=LOW:HIGH`` (ranges).

    Raises:
        ValueError: naming the malformed argument and the expected form.
    """
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise ValueError(f"--{kind} {text!r}: expected NAME=" + ("v1,v2" if kind == "grid" else "LOW:HIGH"))
    if kind == "grid":
        return Param(name, kind, tuple(typed(v) for v in rest.split(",")))
    low, sep, high = rest.partition(":")
    if not sep:
        raise ValueError(f"--{kind} {text!r}: expected NAME=LOW:HIGH")
    try:
        lo, hi = float(low), float(high)
    except ValueError:
        raise ValueError(f"--{kind} {text!r}: LOW:HIGH must be numbers") from None
    if lo >= hi or (kind == "loguniform" and lo <= 0):
        raise ValueError(f"--{kind} {text!r}: need LOW < HIGH" + (" and LOW > 0" if kind == "loguniform" else ""))
    return Param(name, kind, (), lo, hi)


def typed(text: str) -> Any:
    """``"3"`` -> 3, ``"0.1"`` -> 0.1, anything else stays a string."""
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def grid_size(params: list[Param]) -> int | None:
    """Combinations of an all-grid space (None when a parameter is a range)."""
    if any(p.kind != "grid" for p in params):
        return None
    return math.prod(len(p.values) for p in params)
