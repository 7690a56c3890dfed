"""Choosing the next trial's parameters: grid, random, or TPE (optuna).

A sampler yields parameter dicts in a fixed order for a given seed, so a resumed sweep
proposes the same trials again and skips those already in ``results.csv``; TPE is told
the finished trials' results before it proposes the next.
"""

from __future__ import annotations

import itertools
import random
from typing import Any

from flowmesh.sweep.space import Param, grid_size


class GridSampler:
    """Every combination of the grid, the last parameter varying fastest."""

    def __init__(self, params: list[Param], seed: int = 0):
        if grid_size(params) is None:
            raise ValueError("--sampler grid needs only --grid parameters; use random or tpe for ranges")
        names = [p.name for p in params]
        self._trials = [dict(zip(names, values)) for values in itertools.product(*(p.values for p in params))]

    def propose(self, index: int) -> dict[str, Any] | None:
        return self._trials[index] if index < len(self._trials) else None

    def tell(self, params: dict[str, Any], value: float | None) -> None:
        """Grid search learns nothing from results."""


class RandomSampler:
    """Independent uniform draws (trial ``i`` from its own seeded generator)."""

    def __init__(self, params: list[Param], seed: int = 0):
        self._params, self._seed = params, seed

    def propose(self, index: int) -> dict[str, Any] | None:
        rng = random.Random(f"{self._seed}:{index}")
        return {p.name: p.sample(rng) for p in self._params}

    def tell(self, params: dict[str, Any], value: float | None) -> None:
        """Random search learns nothing from results."""


class TPESampler:
    """Tree-structured Parzen estimators from optuna (``pip install optuna``)."""

    def __init__(self, params: list[Param], seed: int = 0, mode: str = "max"):
        try:
            import optuna
        except ImportError:
            raise ValueError("--sampler tpe needs optuna: pip install 'flowmesh[sweep]'") from None
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        self._optuna = optuna
        self._study = optuna.create_study(direction="maximize" if mode == "max" else "minimize",
                                          sampler=optuna.samplers.TPESampler(seed=seed))
        self._space = {p.name: _distribution(optuna, p) for p in params}
        self._asked: dict[str, Any] = {}

    def propose(self, index: int) -> dict[str, Any] | None:
        trial = self._study.ask(self._space)
        self._asked[_key(trial.params)] = trial
        return dict(trial.params)

    def tell(self, params: dict[str, Any], value: float | None) -> None:
        trial = self._asked.pop(_key(params), None)
        state = self._optuna.trial.TrialState
        if trial is not None:
            self._study.tell(trial, value, state=state.COMPLETE if value is not None else state.FAIL)
        elif value is not None:  # a result from before a resume
            self._study.add_trial(self._optuna.trial.create_trial(
                params=params, distributions=self._space, value=value))


def make_sampler(name: str, params: list[Param], seed: int, mode: str) -> Any:
    if name == "grid":
        return GridSampler(params, seed)
    if name == "random":
        return RandomSampler(params, seed)
    if name == "tpe":
        return TPESampler(params, seed, mode)
    raise ValueError(f"unknown sampler {name!r}: grid, random or tpe")


def _distribution(optuna: Any, p: Param) -> Any:
    if p.kind == "grid":
        return optuna.distributions.CategoricalDistribution(list(p.values))
    if p.kind == "int":
        return optuna.distributions.IntDistribution(int(p.low), int(p.high))
    return optuna.distributions.FloatDistribution(p.low, p.high, log=p.kind == "loguniform")


def _key(params: dict[str, Any]) -> str:
    return repr(sorted(params.items()))
