"""The loops of ``fit``, ``evaluate`` and ``predict``: NumPy batches fed to the graph the
model built once, one ``Session.run`` per step, callbacks around every batch and epoch.
Loss and metrics shown for an epoch are means over its samples (each batch weighted by
its size), as Keras's ``Mean`` metrics give."""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.keras import backend
from flowmesh.keras.callbacks.base import Callback, CallbackList
from flowmesh.keras.callbacks.history import History, ProgbarLogger
from flowmesh.keras.engine import data_adapter, distributed_training, sample_weights
from flowmesh.keras.engine import parameter_server_training as ps_training
from flowmesh.keras.engine.epoch_means import EpochMeans, count_fetches


def _prepare_x(model: Any, x: Any) -> list[np.ndarray]:
    names = model.input_names if model.inputs else [f"input_{i + 1}" for i in range(_count(x))]
    xs = data_adapter.to_list(x, names, "input")
    model._ensure_inputs(xs)
    return xs


def _count(x: Any) -> int:
    if isinstance(x, dict):
        return len(x)
    if isinstance(x, (list, tuple)) and x and isinstance(x[0], (np.ndarray, list, tuple)) and \
            not np.isscalar(x[0]) and np.ndim(x[0]) >= 1 and len({np.shape(a)[0] for a in x}) <= 1 and \
            all(isinstance(a, np.ndarray) for a in x):
        return len(x)
    return 1


def _prepare_y(model: Any, y: Any) -> list[np.ndarray] | None:
    """The target arrays; a 1-D target of an output of rank >= 2 becomes a column ``[N, 1]``,
    as tf-keras's ``standardize_single_array`` does (``fit(x, labels)`` for a ``Dense(1)``)."""
    ys = data_adapter.to_list(y, model.output_names, "target")
    if ys is None:
        return None
    ranks = [out.shape.rank for out in model.outputs] if model.outputs else [None] * len(ys)
    return [a[:, None] if a.ndim == 1 and (rank is None or rank >= 2) else a for a, rank in zip(ys, ranks)]


_SAME_SHAPE_LOSSES = frozenset({"mean_squared_error", "mse", "binary_crossentropy", "categorical_crossentropy"})
"""Losses whose targets must have the output's shape (tf-keras's check_loss_and_target_compatibility)."""


def _needs_targets(model: Any) -> bool:
    """Whether some output has a loss (else ``fit(x)`` trains on the added losses alone)."""
    compiled = model._compiled
    return compiled is None or any(fn is not None for fn in compiled.loss_fns)


def check_targets(model: Any, config: Any, target_shapes: list[tuple]) -> None:
    """Checks target shapes against the outputs before the loss graph is built.

    Raises:
        ValueError: naming the output layer, its shape, the target shape and the loss.
    """
    pairs = [(out, name, fn) for out, name, fn in zip(model.outputs, model.output_names, config.loss_fns)]
    if len(target_shapes) != len(pairs):  # targets of the outputs with a loss only
        pairs = [pair for pair in pairs if pair[2] is not None]
    for (out, name, fn), shape in zip(pairs, target_shapes):
        if fn is None:
            continue
        out_dims = out.shape.as_list() if out.shape.rank is not None else None
        if out_dims is None:
            continue
        loss_name = getattr(fn, "__name__", None) or getattr(fn, "name", type(fn).__name__)
        sparse = "sparse" in str(loss_name)
        if sparse:
            ok = len(shape) == len(out_dims) - 1 or (len(shape) == len(out_dims) and shape[-1] == 1)
        else:  # tf-keras's key losses need the output's shape; others may broadcast
            exact = str(loss_name) in _SAME_SHAPE_LOSSES
            ok = len(shape) == len(out_dims) and all(
                o is None or t == o or (not exact and (t == 1 or o == 1)) for t, o in zip(shape[1:], out_dims[1:]))
        if not ok:
            raise ValueError(
                f"A target array with shape {shape} was passed for an output of shape {tuple(out_dims)} "
                f"(layer \"{name}\") while using as loss `{loss_name}`. This loss expects targets to have "
                f"{'one dimension less than' if sparse else 'the same shape as'} the output."
            )


def _weights(model: Any, ys: list[np.ndarray], sample_weight: Any, class_weight: Any) -> list[Any] | None:
    """Per-output weight arrays (see ``sample_weights.standardize``), or None."""
    if sample_weight is None and class_weight is None:
        return None
    modes = model._compiled.sample_weight_modes if model._compiled is not None else []
    out: list[Any] = []
    for i, (y, name) in enumerate(zip(ys, model.output_names)):
        output = model.outputs[i] if i < len(model.outputs) else None
        shape = output.shape.as_list() if output is not None and output.shape.rank is not None else None
        out.append(sample_weights.standardize(y, shape, sample_weights.for_output(sample_weight, i, name),
                                              sample_weights.for_output(class_weight, i, name),
                                              modes[i] if i < len(modes) else None, name))
    return out


def _callbacks(model: Any, callbacks: Any, verbose: int, params: dict[str, Any],
               history: bool = True) -> tuple[CallbackList, History | None]:
    # Keras's order: the progress bar first, the user's callbacks, History last (so it
    # records what the others add to the logs, e.g. "lr").
    items: list[Callback] = [ProgbarLogger()] if verbose and history else []
    items += list(callbacks or [])
    hist = History() if history else None
    if hist is not None:
        items.append(hist)
    return CallbackList(items, model=model, params=params), hist


def fit(model: Any, x: Any, y: Any, batch_size: int | None, epochs: int, verbose: int, callbacks: Any,
        validation_split: float, validation_data: Any, shuffle: Any, class_weight: Any,
        sample_weight: Any, initial_epoch: int, steps_per_epoch: int | None, validation_steps: int | None,
        validation_freq: int) -> History:
    """The ``fit`` loop (see ``Model.fit``)."""
    batch_size = batch_size or 32
    if data_adapter.is_dataset(x):
        return _fit_dataset(model, x, epochs, verbose, callbacks, validation_data, initial_epoch,
                            steps_per_epoch, validation_steps, validation_freq)
    if y is None and _needs_targets(model):
        raise ValueError("fit() got x but no y: pass targets (y=...) or a dataset yielding (x, y) pairs.")
    xs, ys = _prepare_x(model, x), _prepare_y(model, y) or []
    weights = _weights(model, ys, sample_weight, class_weight)
    n = data_adapter.check_lengths(xs, ys, weights)
    val = None
    if validation_data is not None:
        val = _unpack_validation(model, validation_data)
    elif validation_split:
        arrays = xs + ys + (weights or [])
        train, held = data_adapter.split_validation(arrays, validation_split)
        k, m = len(xs), len(ys)
        xs, ys = train[:k], train[k:k + m]
        weights = train[k + m:] or None
        val = (held[:k], held[k:k + m], held[k + m:] or None)
        n = len(xs[0])
    strategy = getattr(model, "_distribution", None)
    if distributed_training.workers(strategy) > 1:
        k, m = len(xs), len(ys)
        arrays, batch_size = distributed_training.worker_shard(strategy, xs + ys + (weights or []), batch_size)
        xs, ys, weights = arrays[:k], arrays[k:k + m], arrays[k + m:] or None
        n = len(xs[0])
    elif ps_training.is_parameter_server(strategy):
        k, m = len(xs), len(ys)
        arrays = ps_training.trainer_shard(strategy, xs + ys + (weights or []))
        xs, ys, weights = arrays[:k], arrays[k:k + m], arrays[k + m:] or None
        n = len(xs[0])
    graph = model._graph_for(ys)
    fetches = graph.train_fetches()
    session = backend.get_session()
    names = model.metrics_names
    steps = steps_per_epoch or -(-n // batch_size)
    announce = f"Train on {n} samples" + (f", validate on {len(val[0][0])} samples" if val else "")
    params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "samples": n, "verbose": verbose,
              "do_validation": val is not None, "announce": announce,
              "metrics": names + [f"val_{m}" for m in names] if val else names}
    cbs, history = _callbacks(model, callbacks, verbose, params)
    model.history = history
    model.stop_training = False
    rng = np.random  # the global NumPy state, as Keras shuffles: np.random.seed(...) repeats a run
    cbs.on_train_begin()
    initial_epoch = max(initial_epoch, model.__dict__.pop("_resume_epoch", 0))
    for epoch in range(initial_epoch, epochs):
        cbs.on_epoch_begin(epoch)
        means = EpochMeans(graph, names)
        for step, index in enumerate(_indices(n, batch_size, shuffle, rng, steps_per_epoch)):
            size = data_adapter.batch_size_of(index)
            cbs.on_train_batch_begin(step, {"batch": step, "size": size})
            feed = graph.feed([_take(a, index) for a in xs], [_take(a, index) for a in ys],
                              None if weights is None else [_take(w, index) if w is not None else None
                                                            for w in weights], training=True)
            values = means.add(session.run(fetches, feed)[1:], size)
            logs = {"batch": step, "size": size, **dict(zip(names, values))}
            cbs.on_train_batch_end(step, logs)
            if model.stop_training:
                break
        epoch_logs = dict(zip(names, means.means()))
        if val is not None and (epoch + 1) % validation_freq == 0:
            val_logs = _test_arrays(model, val[0], val[1], val[2], batch_size, CallbackList())
            epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
        cbs.on_epoch_end(epoch, epoch_logs)
        if model.stop_training:
            break
    cbs.on_train_end()
    return history


def _take(array: np.ndarray, index: np.ndarray | slice) -> np.ndarray:
    """One batch of ``array``: a view for a slice of a row-major array, else a copy."""
    batch = array[index]
    return batch if batch.flags.c_contiguous else np.ascontiguousarray(batch)


def _indices(n: int, batch_size: int, shuffle: Any, rng: np.random.Generator, steps: int | None) -> Any:
    if steps is None:
        yield from data_adapter.batch_slices(n, batch_size, shuffle, rng)
        return
    produced = 0
    while produced < steps:
        for index in data_adapter.batch_slices(n, batch_size, shuffle, rng):
            yield index
            produced += 1
            if produced == steps:
                return


def _unpack_validation(model: Any, data: Any) -> tuple[list, list, Any]:
    if not isinstance(data, (list, tuple)) or len(data) not in (2, 3):
        raise ValueError("validation_data must be a tuple (x_val, y_val) or (x_val, y_val, val_sample_weights)"
                         f", got {type(data).__name__}")
    xs, ys = _prepare_x(model, data[0]), _prepare_y(model, data[1]) or []
    weights = _weights(model, ys, data[2], None) if len(data) == 3 else None
    data_adapter.check_lengths(xs, ys, weights)
    return xs, ys, weights


def _test_arrays(model: Any, xs: list, ys: list, weights: Any, batch_size: int,
                 cbs: CallbackList) -> dict[str, float]:
    graph = model._graph_for(ys)
    session = backend.get_session()
    fetches = [graph.total_loss] + graph.metric_tensors + count_fetches(graph)
    names = model.metrics_names
    n = len(xs[0])
    means = EpochMeans(graph, names)
    cbs.on_test_begin()
    for step, start in enumerate(range(0, n, batch_size)):
        index = slice(start, start + batch_size)
        cbs.on_test_batch_begin(step, {"batch": step})
        feed = graph.feed([a[index] for a in xs], [a[index] for a in ys],
                          None if weights is None else [w[index] if w is not None else None for w in weights])
        values = means.add(session.run(fetches, feed), min(batch_size, n - start))
        cbs.on_test_batch_end(step, dict(zip(names, values)))
    logs = dict(zip(names, means.means()))
    cbs.on_test_end(logs)
    return logs


def evaluate(model: Any, x: Any, y: Any, batch_size: int | None, verbose: int, sample_weight: Any,
             steps: int | None, callbacks: Any) -> dict[str, float]:
    """The ``evaluate`` loop: means of loss and metrics over all samples."""
    if data_adapter.is_dataset(x):
        return _evaluate_dataset(model, x, steps)
    if y is None and _needs_targets(model):
        raise ValueError("evaluate() got x but no y: pass targets (y=...) or a dataset of (x, y) pairs.")
    xs, ys = _prepare_x(model, x), _prepare_y(model, y) or []
    weights = _weights(model, ys, sample_weight, None)
    data_adapter.check_lengths(xs, ys, weights)
    cbs = CallbackList(list(callbacks or []), model=model, params={"verbose": verbose})
    logs = _test_arrays(model, xs, ys, weights, batch_size or 32, cbs)
    if verbose:
        from flowmesh.keras.utils.progbar import format_value

        n = len(xs[0])
        print(f"{n}/{n} - " + " - ".join(f"{k}:{format_value(v)}" for k, v in logs.items()))
    return logs


def predict(model: Any, x: Any, batch_size: int | None, verbose: int, steps: int | None, callbacks: Any,
            one_batch: bool = False) -> Any:
    """The ``predict`` loop: outputs of every batch, concatenated."""
    if data_adapter.is_dataset(x):
        return _predict_dataset(model, x, steps)
    xs = _prepare_x(model, x)
    n = data_adapter.check_lengths(xs, None)
    session = backend.get_session()
    outputs = model.outputs
    feed_inputs = model.inputs
    batch_size = n if one_batch else (batch_size or 32)
    chunks: list[list[np.ndarray]] = []
    for start in range(0, n, batch_size):
        feed = {p: np.asarray(a[start:start + batch_size], dtype=p.dtype.as_numpy_dtype)
                for p, a in zip(feed_inputs, xs)}
        chunks.append(session.run(outputs, feed))
    if not chunks:
        return [] if len(outputs) > 1 else np.zeros((0,) + tuple(d or 0 for d in outputs[0].shape.as_list()[1:]))
    merged = [np.concatenate([c[i] for c in chunks]) for i in range(len(outputs))]
    return merged[0] if len(merged) == 1 else merged


def run_batch(model: Any, x: Any, y: Any, sample_weight: Any, class_weight: Any, train: bool) -> dict[str, float]:
    """One train (or test) step on one batch."""
    model._require_compiled("training" if train else "testing")
    xs, ys = _prepare_x(model, x), _prepare_y(model, y)
    weights = _weights(model, ys, sample_weight, class_weight)
    data_adapter.check_lengths(xs, ys, weights)
    graph = model._graph_for(ys)
    fetches = graph.train_fetches() if train else [graph.total_loss] + graph.metric_tensors
    session = backend.get_session()
    values = session.run(fetches, graph.feed(xs, ys, weights, training=train))
    return dict(zip(model.metrics_names, (float(v) for v in values[1 if train else 0:])))


# --- tf.data datasets --------------------------------------------------------------------------
def _fit_dataset(model: Any, dataset: Any, epochs: int, verbose: int, callbacks: Any, validation_data: Any,
                 initial_epoch: int, steps_per_epoch: int | None, validation_steps: int | None,
                 validation_freq: int) -> History:
    session = backend.get_session()
    batches = data_adapter.batches_for(dataset, session)
    first = batches.next()
    if first is None:
        raise ValueError("fit() got an empty dataset")
    xs, ys, weight = first
    _prepare_x(model, xs if len(xs) > 1 else xs[0])
    if weight is not None and ys:
        _weights(model, ys[:1], weight, None)  # the dataset's weights fit the mode (checked once)
    graph = model._graph_for(ys)
    fetches = graph.train_fetches()
    session = backend.get_session()
    names = model.metrics_names
    params = {"epochs": epochs, "steps": steps_per_epoch, "samples": None, "verbose": verbose,
              "metrics": names + [f"val_{m}" for m in names] if validation_data is not None else names}
    cbs, history = _callbacks(model, callbacks, verbose, params)
    model.history, model.stop_training = history, False
    pending = first
    cbs.on_train_begin()
    initial_epoch = max(initial_epoch, model.__dict__.pop("_resume_epoch", 0))
    for epoch in range(initial_epoch, epochs):
        cbs.on_epoch_begin(epoch)
        means, step = EpochMeans(graph, names), 0
        while steps_per_epoch is None or step < steps_per_epoch:
            batch = pending if pending is not None else batches.next()
            pending = None
            if batch is None:
                if steps_per_epoch is None:
                    batches.restart()
                    break
                batches.restart()
                continue
            bx, by, bw = batch
            size = len(bx[0])
            cbs.on_train_batch_begin(step, {"batch": step, "size": size})
            values = means.add(session.run(fetches, graph.feed(bx, by, None if bw is None else [bw],
                                                               training=True))[1:], size)
            cbs.on_train_batch_end(step, {"batch": step, "size": size, **dict(zip(names, values))})
            step += 1
            if model.stop_training:
                break
        epoch_logs = dict(zip(names, means.means()))
        if validation_data is not None and (epoch + 1) % validation_freq == 0:
            if data_adapter.is_dataset(validation_data):
                val_logs = _evaluate_dataset(model, validation_data, validation_steps)
            else:
                vx, vy, vw = _unpack_validation(model, validation_data)
                val_logs = _test_arrays(model, vx, vy, vw, 32, CallbackList())
            epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
        cbs.on_epoch_end(epoch, epoch_logs)
        if model.stop_training:
            break
    cbs.on_train_end()
    return history


def _evaluate_dataset(model: Any, dataset: Any, steps: int | None) -> dict[str, float]:
    session = backend.get_session()
    batches = data_adapter.batches_for(dataset, session)
    names = model.metrics_names
    means, step = None, 0
    while steps is None or step < steps:
        batch = batches.next()
        if batch is None:
            break
        bx, by, bw = batch
        if step == 0:
            _prepare_x(model, bx if len(bx) > 1 else bx[0])
            if bw is not None and by:
                _weights(model, by[:1], bw, None)
        graph = model._graph_for(by)
        means = means or EpochMeans(graph, names)
        means.add(backend.get_session().run([graph.total_loss] + graph.metric_tensors + count_fetches(graph),
                                            graph.feed(bx, by, None if bw is None else [bw])), len(bx[0]))
        step += 1
    return dict(zip(names, means.means() if means is not None else [0.0] * len(names)))


def _predict_dataset(model: Any, dataset: Any, steps: int | None) -> Any:
    session = backend.get_session()
    batches = data_adapter.batches_for(dataset, session)
    chunks, step = [], 0
    while steps is None or step < steps:
        batch = batches.next()
        if batch is None:
            break
        bx = batch[0]
        chunks.append(predict(model, bx if len(bx) > 1 else bx[0], len(bx[0]), 0, None, None))
        step += 1
    if not chunks:
        return np.zeros((0,))
    if isinstance(chunks[0], list):
        return [np.concatenate([c[i] for c in chunks]) for i in range(len(chunks[0]))]
    return np.concatenate(chunks)
