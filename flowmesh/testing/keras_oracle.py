"""TensorFlow's ``tf.layers`` and Keras (tf-keras, graph mode) as test oracles.

TensorFlow 2.21's own Keras 3 has no ``tf.compat.v1.layers``; the ``tf-keras`` package
(``dev`` extra) still ships them (``tf_keras.src.legacy_tf_layers``) and its Keras builds
graphs when eager execution is disabled. Loaded once per process; tests skip cleanly when
either is missing.

:func:`compare_layer` builds the same layer program in flowmesh and in TensorFlow, copies
TensorFlow's initial variable values into flowmesh **by variable name** (so names must
match exactly), and compares outputs, gradients with respect to the input and every
trainable variable, and the variables after running the update ops.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from flowmesh.testing.tf_oracle import load_tensorflow, session_config


@functools.cache
def load_tf_layers() -> Any:
    """A namespace of TensorFlow's ``tf.layers`` functions and classes, or None."""
    if load_tensorflow() is None:
        return None
    try:
        from tf_keras.src.legacy_tf_layers import convolutional, core, normalization, pooling
    except Exception:  # noqa: BLE001 - any import failure means "no oracle"
        return None
    names: dict[str, Any] = {}
    for module in (core, convolutional, pooling, normalization):
        names.update({k: v for k, v in vars(module).items() if not k.startswith("_")})
    return types.SimpleNamespace(**names)


@functools.cache
def load_tf_keras() -> Any:
    """The ``tf_keras`` module (TensorFlow's Keras 2, graph mode here), or None."""
    if load_tensorflow() is None:
        return None
    try:
        import tf_keras
    except Exception:  # noqa: BLE001
        return None
    return tf_keras


def require_tf_layers() -> tuple[Any, Any]:
    """``(tensorflow.compat.v1, tf.layers namespace)``; skips the test without them."""
    layers = load_tf_layers()
    if layers is None:
        import pytest

        pytest.skip("tensorflow and tf-keras are needed for the tf.layers oracle")
    return load_tensorflow(), layers


def require_tf_keras() -> tuple[Any, Any]:
    """``(tensorflow.compat.v1, tf_keras)``; skips the test without them."""
    keras = load_tf_keras()
    if keras is None:
        import pytest

        pytest.skip("tensorflow and tf-keras are needed for the Keras oracle")
    return load_tensorflow(), keras


# The oracle's tf-keras runs with eager execution off but TensorFlow 2 behaviour on, where
# compile names metrics as given ("accuracy", "mae", repeats "_1"); TensorFlow 1.x graph
# mode, which flowmesh follows, names them "acc", "mean_absolute_error", "weighted_acc".
_V1_METRIC_NAMES = {"accuracy": "acc", "acc": "acc", "mae": "mean_absolute_error",
                    "mse": "mean_squared_error"}


def v1_metric_names(history: dict[str, Any], weighted: tuple[str, ...] = (),
                    outputs: tuple[str, ...] = ()) -> dict[str, Any]:
    """A tf-keras (TensorFlow 2 behaviour) history or logs dict with the keys TensorFlow 1.x
    graph mode gives: ``accuracy`` -> ``acc``, ``mae`` -> ``mean_absolute_error``; the
    names in ``weighted`` (e.g. ``"accuracy_1"``, a weighted metric) -> ``weighted_<v1 name>``;
    ``outputs``: the output names that prefix the metrics of a model with several outputs."""
    renamed = {}
    for key, value in history.items():
        prefix, name = ("val_", key[4:]) if key.startswith("val_") else ("", key)
        for output in outputs:
            if name.startswith(output + "_"):
                prefix, name = prefix + output + "_", name[len(output) + 1:]
                break
        if name in weighted:
            base = name.rsplit("_", 1)[0]
            name = "weighted_" + _V1_METRIC_NAMES.get(base, base)
        else:
            name = _V1_METRIC_NAMES.get(name, name)
        renamed[prefix + name] = value
    return renamed


Build = Callable[[Any, Any, Any], Any]


def _run_side(tf: Any, layers: Any, build: Build, x_value: np.ndarray, cotangent_seed: int,
              initial: dict[str, np.ndarray] | None, config: Any) -> dict[str, Any]:
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None] + list(x_value.shape[1:]), name="x")
        y = build(tf, layers, x)
        variables = sorted(tf.global_variables(), key=lambda v: v.name)
        trainable = sorted(tf.trainable_variables(), key=lambda v: v.name)
        rng = np.random.default_rng(cotangent_seed)
        cot = tf.constant(rng.standard_normal([d or x_value.shape[0] for d in y.shape.as_list()])
                          .astype(np.float32))
        loss = tf.reduce_sum(y * cot)
        wrt = [x] + trainable
        grads = tf.gradients(loss, wrt)
        grad_names = [t.name for t, g in zip(wrt, grads) if g is not None]
        grads = [g for g in grads if g is not None]
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.Session(graph=graph, config=config) as sess:
            sess.run(tf.global_variables_initializer())
            if initial is not None:
                missing = sorted(set(initial) - {v.name for v in variables})
                extra = sorted({v.name for v in variables} - set(initial))
                if missing or extra:
                    raise AssertionError(f"variable names differ: TensorFlow only {missing}, flowmesh only {extra}")
                for v in variables:
                    v.load(initial[v.name], sess)
            start = {v.name: sess.run(v) for v in variables}
            out, grad_values = sess.run([y, grads], {x: x_value})
            if updates:
                sess.run(updates, {x: x_value})
            after = {v.name: sess.run(v) for v in variables}
    grad_values = [_densify(g) for g in grad_values]
    return {"out": out, "grads": grad_values, "start": start, "after": after,
            "trainable": [v.name for v in trainable], "output_name": y.name, "grad_names": grad_names,
            "shape": y.shape.as_list(), "n_updates": len(updates)}


def _densify(value: Any) -> np.ndarray:
    """A dense array from a gradient value (IndexedSlices values are scattered and summed)."""
    if hasattr(value, "indices") and hasattr(value, "values"):
        dense = np.zeros(tuple(value.dense_shape), dtype=np.asarray(value.values).dtype)
        np.add.at(dense, np.asarray(value.indices), np.asarray(value.values))
        return dense
    return np.asarray(value)


def compare_layer(build: Build, x_value: np.ndarray, rtol: float = 1e-4, atol: float = 1e-5,
                  keras: bool = False) -> dict[str, Any]:
    """Runs ``build(tf, layers, x)`` in TensorFlow and flowmesh from the same weights and
    asserts equal variable names, static shapes, outputs, gradients and updated variables.
    ``layers`` is ``tf.layers`` (or ``tf.keras.layers`` with ``keras=True``).

    Returns:
        flowmesh's results (``out``, ``grads``, ``start``, ``after``, ...).
    """
    import flowmesh

    if keras:
        tf1, tf_keras = require_tf_keras()
        tf_layers, our_layers = tf_keras.layers, flowmesh.keras.layers
    else:
        tf1, tf_layers = require_tf_layers()
        our_layers = flowmesh.layers
    theirs = _run_side(tf1, tf_layers, build, x_value, 0, None, session_config(tf1))
    ours = _run_side(flowmesh, our_layers, build, x_value, 0, theirs["start"], None)
    assert ours["trainable"] == theirs["trainable"], (ours["trainable"], theirs["trainable"])
    assert ours["grad_names"] == theirs["grad_names"], (ours["grad_names"], theirs["grad_names"])
    assert ours["shape"] == theirs["shape"], (ours["shape"], theirs["shape"])
    assert ours["n_updates"] == theirs["n_updates"], (ours["n_updates"], theirs["n_updates"])
    np.testing.assert_allclose(ours["out"], theirs["out"], rtol=rtol, atol=atol, err_msg="output")
    for name, a, b in zip(ours["grad_names"], ours["grads"], theirs["grads"]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"gradient of {name}")
    for name, value in theirs["after"].items():
        np.testing.assert_allclose(ours["after"][name], value, rtol=rtol, atol=atol,
                                   err_msg=f"{name} after the update ops")
    return ours


def _plain(value: Any) -> Any:
    """A config as JSON would hold it, without tf-keras's ``module``/``registered_name``."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in ("module", "registered_name")}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if hasattr(value, "as_list"):  # a TensorShape in tf-keras's config
        return _plain(value.as_list() if value.rank is not None else None)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):  # tf-keras keeps some settings as float32 (0.2 -> 0.200000003)
        return float(np.float32(value))
    return value


def compare_config(make: Callable[[Any], Any], input_shape: Any, ignore: tuple[str, ...] = ("groups",)
                   ) -> dict[str, Any]:
    """Builds ``make(layers)`` in tf-keras and in flowmesh on inputs of ``input_shape`` (one
    shape, or a list for several inputs) and asserts equal ``get_config()`` (as JSON, floats
    as float32; keys in ``ignore`` skipped: by default ``groups``, which the two write for
    different sets of convolution classes) and that flowmesh's ``from_config`` gives the same
    config back.

    Returns:
        flowmesh's config.
    """
    import flowmesh

    tf1, tf_keras = require_tf_keras()
    configs = []
    for lib, layers in ((tf1, tf_keras.layers), (flowmesh, flowmesh.keras.layers)):
        with lib.Graph().as_default():
            layer = make(layers)
            shapes = input_shape if isinstance(input_shape, list) else [input_shape]
            xs = [lib.placeholder(lib.float32, [None] + list(shape)) for shape in shapes]
            layer(xs if isinstance(input_shape, list) else xs[0])
            configs.append((layer, _plain(layer.get_config())))
    (_, theirs), (ours_layer, ours) = configs
    for key in ignore:
        theirs.pop(key, None)
        ours.pop(key, None)
    assert ours == theirs, f"config differs:\nflowmesh   {ours}\ntensorflow {theirs}"
    with flowmesh.Graph().as_default():
        again = _plain(type(ours_layer).from_config(ours_layer.get_config()).get_config())
    for key in ignore:
        again.pop(key, None)
    assert again == ours, f"from_config(get_config()) differs:\n{again}\n{ours}"
    return ours
