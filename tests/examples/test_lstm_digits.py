"""The LSTM digits example learns (both APIs) from its fixed seed."""

from __future__ import annotations


def test_tf1_dynamic_rnn_lstm_learns(example, capsys) -> None:
    lstm = example("lstm_digits")
    accuracy = lstm.main(["--steps", "300"])
    assert accuracy >= 0.9
    assert f"test accuracy {accuracy:.4f}" in capsys.readouterr().out


def test_keras_sequential_lstm_learns(example) -> None:
    lstm = example("lstm_digits")
    assert lstm.train_keras(epochs=15, verbose=0) >= 0.9
