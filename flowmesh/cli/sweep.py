"""``flowmesh sweep``: parallel hyperparameter experiments.

    flowmesh sweep --grid lr=0.1,0.01 --grid batch=64,128 --metric accuracy --mode max \\
        --parallel 2 --out /tmp/sweep examples/digits_mlp.py --steps 300

runs ``SCRIPT ARGS --lr=0.1 --batch=64`` and so on, ``--parallel`` at a time. A trial
reports by printing ``accuracy: 0.93`` lines (or ``flowmesh.sweep.report(accuracy=0.93)``):
the last one is its result, earlier ones feed ``--early-stop median|asha``. Prints a row
per trial and ``best {...}``; writes ``results.csv`` and ``sweep.png`` into ``--out``; run
again with the same arguments to resume after a crash.
"""

from __future__ import annotations

import argparse
import os
import sys

HELP = "parallel hyperparameter experiments (grid, random, tpe; local, spark or ray)"
INTERMIXED_ARGS = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for kind in ("grid", "uniform", "loguniform", "int"):
        parser.add_argument(f"--{kind}", action="append", default=[], metavar="NAME=...",
                            help={"grid": "NAME=v1,v2,...", "int": "NAME=LOW:HIGH (integers)"}.get(kind, "NAME=LOW:HIGH"))
    parser.add_argument("--trials", type=int, default=0, help="trials (default: the whole grid, or 10)")
    parser.add_argument("--sampler", choices=["grid", "random", "tpe"], default=None,
                        help="default: grid for grids, random with ranges")
    parser.add_argument("--engine", choices=["local", "spark", "ray"], default="local")
    parser.add_argument("--parallel", type=int, default=2, help="trials at a time")
    parser.add_argument("--early-stop", choices=["median", "asha"], default=None)
    parser.add_argument("--grace", type=int, default=1, help="reports before early stopping may act")
    parser.add_argument("--metric", required=True, help="the reported metric to optimise")
    parser.add_argument("--mode", choices=["max", "min"], default="max")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="sweep", help="directory for results.csv, sweep.png, logs")
    parser.add_argument("script", help="the trial's script (or python SCRIPT)")
    parser.add_argument("args", nargs="*", help="the script's arguments (after `--` if they start with -)")


def run(args: argparse.Namespace) -> int:
    from flowmesh.sweep import space
    from flowmesh.sweep.runner import Sweep, SweepConfig
    from flowmesh.sweep.samplers import make_sampler

    try:
        params = [space.parse(kind, text) for kind in space.KINDS for text in getattr(args, kind)]
        if not params:
            raise ValueError("give at least one parameter, e.g. --grid lr=0.1,0.01")
        size = space.grid_size(params)
        sampler_name = args.sampler or ("grid" if size is not None else "random")
        trials = args.trials or (size if sampler_name == "grid" and size else 10)
        sampler = make_sampler(sampler_name, params, args.seed, args.mode)
        config = SweepConfig(_script(args), args.metric, args.mode, trials, max(1, args.parallel),
                             args.out, args.engine, args.early_stop, args.grace)
        sweep = Sweep(config, sampler)
    except ValueError as exc:
        print(f"flowmesh sweep: {exc}", file=sys.stderr)
        return 2
    rows = sweep.run()
    return 0 if any(r.status in ("done", "stopped") for r in rows) else 1


def _script(args: argparse.Namespace) -> list[str]:
    rest = list(args.args)
    if os.path.basename(args.script).startswith("python") and rest:
        return [sys.executable, *rest]
    return [sys.executable, args.script, *rest]
