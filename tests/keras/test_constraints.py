"""``tf.keras.constraints`` and ``OrthogonalRegularizer`` against tf-keras, and constraints
applied after each optimizer step."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
W = np.random.default_rng(2).standard_normal((3, 3, 2, 2)).astype(np.float32)
CASES = {
    "max_norm": lambda k: k.constraints.MaxNorm(1.5, axis=[0, 1, 2]),
    "max_norm_alias": lambda k: k.constraints.max_norm(0.5),
    "non_neg": lambda k: k.constraints.NonNeg(),
    "unit_norm": lambda k: k.constraints.UnitNorm(axis=-1),
    "min_max_norm": lambda k: k.constraints.MinMaxNorm(0.5, 1.0, rate=0.5, axis=1),
    "radial_odd": lambda k: k.constraints.RadialConstraint(),
    "radial_even": lambda k: k.constraints.RadialConstraint(),
    "from_name": lambda k: k.constraints.get("non_neg"),
    "round_trip": lambda k: k.constraints.deserialize(k.constraints.serialize(k.constraints.MaxNorm(0.7, 1))),
}


def _apply(lib, make, value):
    with lib.Graph().as_default():
        out = make(lib.keras if lib is tf else _tf_keras())(lib.constant(value))
        with lib.Session() as sess:
            sess.run(lib.global_variables_initializer())  # tf-keras's even RadialConstraint makes a variable
            return sess.run(out)


def _tf_keras():
    from flowmesh.testing.keras_oracle import require_tf_keras

    return require_tf_keras()[1]


@pytest.mark.oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_constraint_matches_tf_keras(case):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, _ = require_tf_keras()
    value = np.random.default_rng(3).standard_normal((4, 4, 2, 2)).astype(np.float32) if case == "radial_even" else W
    np.testing.assert_allclose(_apply(tf, CASES[case], value), _apply(tf1, CASES[case], value), rtol=1e-5, atol=1e-6)
    assert CASES[case](K).get_config() == CASES[case](_tf_keras()).get_config()


@pytest.mark.oracle
@pytest.mark.parametrize("mode", ["rows", "columns"])
def test_orthogonal_regularizer_matches_tf_keras(mode):
    from flowmesh.testing.keras_oracle import require_tf_keras

    tf1, tf_keras = require_tf_keras()
    value = W.reshape(6, 6)
    ours = _apply(tf, lambda k: k.regularizers.OrthogonalRegularizer(0.3, mode), value)
    np.testing.assert_allclose(ours, _apply(tf1, lambda k: k.regularizers.OrthogonalRegularizer(0.3, mode), value),
                               rtol=1e-5)


def test_constraints_are_applied_after_each_step():
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((32, 4)).astype(np.float32), rng.standard_normal((32, 3)).astype(np.float32)
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Dense(3, input_shape=(4,), kernel_constraint="non_neg",
                                             bias_constraint=K.constraints.MaxNorm(0.01))])
        model.compile(K.optimizers.SGD(0.5), "mse")
        model.fit(x, y, epochs=2, verbose=0)
        kernel, bias = model.get_weights()
        assert kernel.min() >= 0.0 and np.linalg.norm(bias) <= 0.01 + 1e-6
        config = model.layers[0].get_config()
        assert config["kernel_constraint"] == {"class_name": "NonNeg", "config": {}}
        assert K.layers.Dense.from_config(config).bias_constraint.max_value == 0.01
