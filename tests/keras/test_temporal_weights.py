"""Sample weights on sequence outputs against tf-keras (graph mode): ``compile(
sample_weight_mode="temporal")`` with ``[batch, time]`` weights, alone and combined with
``Masking`` / ``Embedding(mask_zero=True)`` masks, per-sample weights on a sequence output,
``weighted_metrics`` (weighted by both), and the errors tf-keras gives (named arguments,
how to fix them)."""

from __future__ import annotations

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.keras_oracle import v1_metric_names
from tests.rnn.oracle import require_rnn_oracle

RNG = np.random.default_rng(5)
X = RNG.standard_normal((8, 5, 3)).astype(np.float32)
X[0, 3:] = 0.0    # right padding
X[1, :2] = 0.0    # left padding
X[5, 1:] = 0.0    # one real step
IDS = RNG.integers(1, 7, (8, 5)).astype(np.int32)
IDS[0, 3:] = 0
IDS[2, 1:] = 0
Y = RNG.integers(0, 3, (8, 5, 1)).astype(np.float32)
TEMPORAL = RNG.uniform(0.0, 2.0, (8, 5)).astype(np.float32)
TEMPORAL[3] = 0.0  # a sample with no weight at all
PER_SAMPLE = RNG.uniform(0.0, 2.0, (8,)).astype(np.float32)


def _tagger(lib, head, loss, mode):
    k = lib.keras.layers
    model = lib.keras.Sequential(head(k) + [k.LSTM(4, return_sequences=True),
                                            k.TimeDistributed(k.Dense(3, activation="softmax"))])
    model.compile(optimizer=lib.keras.optimizers.SGD(0.3), loss=loss(lib), metrics=["accuracy"],
                  weighted_metrics=["accuracy"], sample_weight_mode=mode)
    return model


HEADS = {
    "plain": lambda k: [k.InputLayer((5, 3))],
    "masking": lambda k: [k.InputLayer((5, 3)), k.Masking()],
    "mask_zero": lambda k: [k.Embedding(7, 3, mask_zero=True, input_length=5)],
}
SPARSE = lambda lib: "sparse_categorical_crossentropy"  # noqa: E731
SUMMED = lambda lib: lib.keras.losses.SparseCategoricalCrossentropy(reduction="sum")  # noqa: E731
ONE_HOT_MSE = lambda lib: "mse"  # noqa: E731

CASES = {
    "temporal": ("plain", SPARSE, "temporal", TEMPORAL),
    "temporal_masking": ("masking", SPARSE, "temporal", TEMPORAL),
    "temporal_mask_zero_sum_reduction": ("mask_zero", SUMMED, "temporal", TEMPORAL),
    "per_sample_on_sequences": ("plain", ONE_HOT_MSE, None, PER_SAMPLE),
    "per_sample_masked": ("masking", SPARSE, None, PER_SAMPLE),
}


def _run(lib, case, weights=None):
    head, loss, mode, sw = CASES[case]
    x = IDS if head == "mask_zero" else X
    y = np.eye(3, dtype=np.float32)[Y[..., 0].astype(int)] if loss is ONE_HOT_MSE else Y
    model = _tagger(lib, HEADS[head], loss, mode)
    if weights is None:
        weights = model.get_weights()
    else:
        model.set_weights(weights)
    history = model.fit(x, y, epochs=3, batch_size=4, shuffle=False, verbose=0, sample_weight=sw,
                        validation_data=(x[:4], y[:4], sw[:4])).history
    evaluated = model.evaluate(x, y, sample_weight=sw, batch_size=3, verbose=0)
    unweighted = model.evaluate(x, y, verbose=0)
    return weights, history, evaluated, unweighted


@pytest.mark.parametrize("case", sorted(CASES))
def test_sample_weights_on_sequences_follow_tf_keras(case):
    """Same weights and data: the same losses epoch by epoch (fit, validation, evaluate)."""
    tf1 = require_rnn_oracle()
    tf1.experimental.output_all_intermediates(True)
    with tf1.Graph().as_default():
        weights, expected, expected_eval, expected_plain = _run(tf1, case)
    with tf.Graph().as_default():
        _, got, got_eval, got_plain = _run(tf, case, weights)
    expected = v1_metric_names(expected, weighted=("accuracy_1",))
    assert sorted(got) == sorted(expected)  # weighted_acc: the weighted accuracy
    for key in ("loss", "val_loss", "acc", "val_acc", "weighted_acc", "val_weighted_acc"):
        np.testing.assert_allclose(got[key], expected[key], rtol=2e-4, atol=1e-6, err_msg=key)
    np.testing.assert_allclose(got_eval, expected_eval, rtol=2e-4, atol=1e-6)
    np.testing.assert_allclose(got_plain, expected_plain, rtol=2e-4, atol=1e-6)
    assert got["loss"][-1] != got["loss"][0]


def test_temporal_weights_change_the_loss_as_a_weighted_mean_over_steps():
    """Without the oracle: the loss is sum(step loss * weight) / (batch * time), so zero
    weights on every step but one give that one step's loss over batch * time."""
    with tf.Graph().as_default():
        model = _tagger(tf, HEADS["plain"], SPARSE, "temporal")
        per_step = -np.log(np.take_along_axis(model.predict(X), Y.astype(int), axis=-1))[..., 0]
        only = np.zeros_like(TEMPORAL)
        only[2, 3] = 3.0
        loss = model.evaluate(X, Y, sample_weight=only, batch_size=8, verbose=0)[0]
        np.testing.assert_allclose(loss, 3.0 * per_step[2, 3] / X[:, :, 0].size, rtol=1e-5)
        full = model.evaluate(X, Y, sample_weight=TEMPORAL, batch_size=8, verbose=0)[0]
        np.testing.assert_allclose(full, np.sum(per_step * TEMPORAL) / per_step.size, rtol=1e-5)


def test_temporal_weights_from_a_dataset():
    with tf.Graph().as_default():
        model = _tagger(tf, HEADS["masking"], SPARSE, "temporal")
        expected = model.evaluate(X, Y, sample_weight=TEMPORAL, batch_size=4, verbose=0)
        dataset = tf.data.Dataset.from_tensor_slices((X, Y, TEMPORAL)).batch(4)
        got = model.evaluate(dataset, verbose=0)
        np.testing.assert_allclose(got, expected, rtol=1e-5)
        history = model.fit(dataset, epochs=2, verbose=0).history
        assert np.all(np.isfinite(history["loss"]))


def _compiled(mode=None, head="plain", extra_output=False):
    k = tf.keras.layers
    x = tf.keras.Input((5, 3))
    h = HEADS[head](k)[1](x) if head == "masking" else x
    seq = k.TimeDistributed(k.Dense(3, activation="softmax"), name="tags")(k.LSTM(4, return_sequences=True)(h))
    outputs = [seq, k.Dense(2, activation="softmax", name="label")(k.LSTM(2)(h))] if extra_output else seq
    model = tf.keras.Model(x, outputs)
    model.compile("sgd", "sparse_categorical_crossentropy", sample_weight_mode=mode)
    return model


def test_bad_sample_weights_say_how_to_fix_them():
    with tf.Graph().as_default():
        temporal, plain = _compiled("temporal"), _compiled(None)
        with pytest.raises(ValueError, match=r"sample_weight_mode='temporal'.*2D \[batch, time\]"):
            temporal.fit(X, Y, sample_weight=PER_SAMPLE, verbose=0)
        with pytest.raises(ValueError, match=r"\(8, 4\).*\[batch, time\] shape"):
            temporal.fit(X, Y, sample_weight=TEMPORAL[:, :4], verbose=0)
        with pytest.raises(ValueError, match=r"compile with sample_weight_mode='temporal'"):
            plain.fit(X, Y, sample_weight=TEMPORAL, verbose=0)
        with pytest.raises(ValueError, match=r"7 samples for 8 target samples"):
            plain.evaluate(X, Y, sample_weight=PER_SAMPLE[:7], verbose=0)
        with pytest.raises(ValueError, match=r"class_weight.*sequence.*'tags'.*np.vectorize"):
            plain.fit(X, Y, class_weight={0: 1.0, 1: 2.0, 2: 1.0}, verbose=0)
        with pytest.raises(ValueError, match="should be None or 'temporal'.*'timewise'"):
            _compiled("timewise")


def test_per_output_modes():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Unknown entries in sample_weight_mode.*\['tag'\]"):
            _compiled({"tag": "temporal"}, extra_output=True)
        with pytest.raises(ValueError, match="one entry per model output"):
            _compiled(["temporal"], extra_output=True)
        model = _compiled({"tags": "temporal"}, head="masking", extra_output=True)
        # The per-sample output cannot take a temporal mode (no time axis) ...
        with pytest.raises(ValueError, match=r"output 'label' has shape \(None, 2\)"):
            _compiled("temporal", extra_output=True).fit(X, [Y, Y[:, 0]], verbose=0,
                                                        sample_weight=[TEMPORAL, PER_SAMPLE])
        # ... but weights per output (a dict by name), class weights on the 2D one, work.
        history = model.fit(X, {"tags": Y, "label": Y[:, 0] % 2}, epochs=2, verbose=0,
                            sample_weight={"tags": TEMPORAL, "label": PER_SAMPLE},
                            class_weight={"label": {0: 1.0, 1: 3.0}}).history
        assert np.all(np.isfinite(history["loss"]))


def test_the_mode_survives_save_and_load_model(tmp_path):
    pytest.importorskip("h5py")
    path = str(tmp_path / "tagger.h5")
    with tf.Graph().as_default():
        model = _tagger(tf, HEADS["masking"], SPARSE, "temporal")
        expected = model.evaluate(X, Y, sample_weight=TEMPORAL, verbose=0)
        model.save(path)
    with tf.Graph().as_default():
        loaded = tf.keras.models.load_model(path)
        assert loaded._compiled.sample_weight_modes == ["temporal"]
        np.testing.assert_allclose(loaded.evaluate(X, Y, sample_weight=TEMPORAL, verbose=0), expected, rtol=1e-6)


def test_dataset_weights_are_checked_against_the_mode():
    with tf.Graph().as_default():
        plain, temporal = _tagger(tf, HEADS["plain"], SPARSE, None), _tagger(tf, HEADS["plain"], SPARSE, "temporal")
        with pytest.raises(ValueError, match="compile with sample_weight_mode='temporal'"):
            plain.fit(tf.data.Dataset.from_tensor_slices((X, Y, TEMPORAL)).batch(4), verbose=0)
        with pytest.raises(ValueError, match=r"2D \[batch, time\]"):
            temporal.evaluate(tf.data.Dataset.from_tensor_slices((X, Y, PER_SAMPLE)).batch(4), verbose=0)
