"""Keras's published example programs (MNIST convnet and MLP, IMDB LSTM, the variational
autoencoder) learn on synthetic / bundled data in a few seconds."""

from __future__ import annotations


def test_mnist_convnet_learns(example, capsys) -> None:
    accuracy = example("keras_mnist_convnet").main(["--epochs", "4", "--batch", "64"])
    assert accuracy >= 0.85, capsys.readouterr().out  # chance is 0.1


def test_mnist_mlp_learns_with_tensorflow_1_history_keys(example, capsys) -> None:
    accuracy, history = example("keras_mnist_mlp").train(epochs=6, verbose=0)
    assert accuracy >= 0.9, capsys.readouterr().out
    assert sorted(history) == ["acc", "loss", "val_acc", "val_loss"]
    assert history["loss"][-1] < history["loss"][0]


def test_imdb_lstm_learns(example, capsys) -> None:
    accuracy = example("keras_imdb_lstm").main(["--epochs", "3", "--batch", "64", "--maxlen", "50",
                                                "--max-features", "300", "--units", "16"])
    assert accuracy >= 0.8, capsys.readouterr().out  # chance is 0.5


def test_vae_learns(example, capsys) -> None:
    test_loss, baseline = example("keras_vae").main(["--epochs", "30", "--batch", "64"])
    assert test_loss < 0.9 * baseline, capsys.readouterr().out  # 207.7 vs 245.3 here
