"""Keras callbacks: checkpoints, early stopping, learning-rate control, CSV and TensorBoard
logs, and resuming an interrupted fit with BackupAndRestore."""

import csv
import glob
import os

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
RNG = np.random.default_rng(0)
X = RNG.standard_normal((60, 5)).astype(np.float32)
Y = (X @ RNG.standard_normal((5, 1))).astype(np.float32)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default():
        yield


def _model(lr=0.05):
    model = K.Sequential([K.layers.Dense(8, activation="tanh", input_shape=(5,)), K.layers.Dense(1)])
    model.compile(K.optimizers.SGD(lr), "mse", metrics=["mae"])
    return model


def test_model_checkpoint_best_only_and_weights(tmp_path):
    model = _model()
    pattern = str(tmp_path / "m-{epoch:02d}-{val_loss:.3f}.h5")
    model.fit(X, Y, epochs=4, verbose=0, validation_split=0.2, shuffle=False,
              callbacks=[K.callbacks.ModelCheckpoint(pattern, save_best_only=True)])
    files = sorted(glob.glob(str(tmp_path / "m-*.h5")))
    assert files and files[0].endswith(".h5") and os.path.basename(files[0]).startswith("m-01-")
    model.fit(X, Y, epochs=2, verbose=0, callbacks=[
        K.callbacks.ModelCheckpoint(str(tmp_path / "w{epoch}.h5"), monitor="loss", save_weights_only=True)])
    reloaded = _model()
    reloaded.load_weights(str(tmp_path / "w2.h5"))
    np.testing.assert_allclose(reloaded.predict(X), model.predict(X), rtol=1e-6)


def test_early_stopping_restores_best_weights():
    model = _model(lr=0.0)
    seen = []
    stopper = K.callbacks.EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)
    history = model.fit(X, Y, epochs=20, verbose=0, shuffle=False, callbacks=[
        stopper, K.callbacks.LambdaCallback(on_epoch_end=lambda e, logs: seen.append(e))])
    assert len(history.epoch) == 3 and stopper.stopped_epoch == 2 and seen == [0, 1, 2]


def test_learning_rate_scheduler_and_plateau():
    model = _model()
    history = model.fit(X, Y, epochs=3, verbose=0,
                        callbacks=[K.callbacks.LearningRateScheduler(lambda epoch, lr: 0.1 / (epoch + 1))])
    np.testing.assert_allclose(history.history["lr"], [0.1, 0.05, 0.1 / 3], rtol=1e-6)
    frozen = model.get_weights()
    model.fit(X, Y, epochs=1, verbose=0, callbacks=[K.callbacks.LearningRateScheduler(lambda epoch: 0.0)])
    for a, b in zip(frozen, model.get_weights()):
        np.testing.assert_array_equal(a, b)
    model = _model(lr=0.0)
    plateau = K.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_lr=0.0)
    K.backend.set_value(model.optimizer.lr, 0.2)
    history = model.fit(X, Y, epochs=1, verbose=0)
    K.backend.set_value(model.optimizer.lr, 0.0)
    history = model.fit(X, Y, epochs=3, verbose=0, callbacks=[plateau])
    assert history.history["lr"] == [0.0, 0.0, 0.0]
    K.backend.set_value(model.optimizer.lr, 0.4)
    model.optimizer.lr  # noqa: B018 - the same variable
    history = model.fit(X, Y, epochs=3, verbose=0, callbacks=[
        K.callbacks.LearningRateScheduler(lambda epoch, lr: lr if epoch == 0 else 0.0), plateau])
    assert history.history["lr"][0] == pytest.approx(0.4)


def test_csv_logger_and_tensorboard(tmp_path):
    model = _model()
    logs_dir = tmp_path / "tb"
    model.fit(X, Y, epochs=3, verbose=0, validation_split=0.25, callbacks=[
        K.callbacks.CSVLogger(str(tmp_path / "log.csv")), K.callbacks.TensorBoard(str(logs_dir))])
    with open(tmp_path / "log.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["0", "1", "2"]
    assert set(rows[0]) == {"epoch", "loss", "mean_absolute_error", "val_loss", "val_mean_absolute_error"}
    tags = {}
    for kind in ("train", "validation"):
        (event_file,) = glob.glob(str(logs_dir / kind / "events.out.tfevents.*"))
        for event in tf.train.summary_iterator(event_file):
            for value in (event.summary.value if event.summary is not None else []):
                tags.setdefault((kind, value.tag), []).append(event.step)
    assert tags[("train", "epoch_loss")] == [0, 1, 2] and tags[("validation", "epoch_mean_absolute_error")] == [0, 1, 2]


class _Crash(K.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        if epoch == 2:
            raise RuntimeError("simulated preemption")


def test_backup_and_restore_resumes_where_it_stopped(tmp_path):
    start = _model(lr=0.1)
    initial = start.get_weights()
    start.fit(X, Y, epochs=4, verbose=0, shuffle=False)
    expected = start.get_weights()
    with tf.Graph().as_default():
        model = _model(lr=0.1)
        model.set_weights(initial)
        backup = K.callbacks.BackupAndRestore(str(tmp_path / "backup"))
        with pytest.raises(RuntimeError, match="preemption"):
            model.fit(X, Y, epochs=4, verbose=0, shuffle=False, callbacks=[backup, _Crash()])
    with tf.Graph().as_default():
        model = _model(lr=0.1)
        history = model.fit(X, Y, epochs=4, verbose=0, shuffle=False,
                            callbacks=[K.callbacks.BackupAndRestore(str(tmp_path / "backup"))])
        assert history.epoch == [2, 3]
        for a, b in zip(model.get_weights(), expected):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert not os.path.exists(tmp_path / "backup")
