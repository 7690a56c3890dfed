"""A Keras model trained with MultiWorkerMirroredStrategy on several worker processes.

    flowmesh run -np 2 examples/keras_multiworker_digits.py [--epochs 6] [--batch 64]
    # or one process per worker with TF_CONFIG (chief + workers), as TensorFlow does

Every worker builds the same model in ``strategy.scope()`` (worker 0's initial weights
are broadcast), ``fit`` gives each worker every n-th training image and an equal share of
the global batch, and the gradients are all-reduced every step, so all workers hold the
same weights. ``--backup_dir`` adds ``BackupAndRestore``: a restarted job resumes after its
last finished epoch (``--kill_at_epoch N`` makes the last worker die at the start of epoch
N, to try it). Each worker prints its final loss; the chief prints the test accuracy.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

import flowmesh as tf
from flowmesh.datasets import load_digits


def build_model() -> tf.keras.Model:
    layers = tf.keras.layers
    return tf.keras.Sequential([layers.Dense(128, activation="relu", input_shape=(64,)),
                                layers.Dense(10, activation="softmax")])


def main(argv: Sequence[str] | None = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=64, help="global batch size")
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--backup_dir", default=None)
    parser.add_argument("--kill_at_epoch", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    (x_train, y_train), (x_test, y_test) = load_digits()
    tf.set_random_seed(args.seed)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    rank = strategy.extended.info.rank
    with strategy.scope():
        model = build_model()
        model.compile(tf.keras.optimizers.SGD(args.lr, momentum=0.5), "sparse_categorical_crossentropy",
                      metrics=["accuracy"])
    callbacks = [tf.keras.callbacks.BackupAndRestore(args.backup_dir)] if args.backup_dir else []
    if args.kill_at_epoch is not None and rank == strategy.num_replicas_in_sync - 1:
        callbacks.append(tf.keras.callbacks.LambdaCallback(
            on_epoch_begin=lambda epoch, logs: os._exit(3) if epoch == args.kill_at_epoch else None))
    history = model.fit(x_train, y_train, batch_size=args.batch, epochs=args.epochs, shuffle=False,
                        verbose=2 if rank == 0 else 0, callbacks=callbacks)
    loss, accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"worker {rank}: epochs {history.epoch}, final training loss {history.history['loss'][-1]:.6f}")
    if rank == 0:
        print(f"test accuracy {accuracy:.4f} on {strategy.num_replicas_in_sync} workers")
    return float(accuracy)


if __name__ == "__main__":
    main()
