"""The Estimator examples: a custom tf.layers CNN model_fn and a premade DNNClassifier
through tf.data with train_and_evaluate (locally; tests/estimator runs it distributed)."""

from __future__ import annotations


def test_custom_cnn_model_fn(example, tmp_path) -> None:
    result = example("estimator_custom_cnn").main(["--model_dir", str(tmp_path), "--steps", "150"])
    assert result["accuracy"] > 0.9 and result["global_step"] == 150
    assert (tmp_path / "model.ckpt-150.index").exists()


def test_premade_dnn_train_and_evaluate(example, tmp_path) -> None:
    result = example("estimator_train_and_evaluate").main(
        ["--model_dir", str(tmp_path), "--max_steps", "100", "--save_steps", "50"])
    assert result["accuracy"] > 0.85 and result["global_step"] == 100
