"""A sweep trial for the tests: reports ``score`` after each of ``--epochs`` epochs.

The score grows with the epochs towards ``lr * batch`` (so the best grid point is known);
``--fail 1`` exits with an error instead.
"""

import argparse
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--batch", type=int, default=1)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--fail", type=int, default=0)
args = parser.parse_args()
if args.fail:
    print("diverged: loss is nan", file=sys.stderr)
    sys.exit(3)
for epoch in range(1, args.epochs + 1):
    print(f"epoch {epoch}")
    print(f"score: {args.lr * args.batch * epoch / args.epochs}", flush=True)
