"""The Keras-guide style examples learn: the Transformer text classifier (custom layers
around MultiHeadAttention) and the MobileNet/ResNet-style digits model (ZeroPadding2D,
DepthwiseConv2D, inverted residuals)."""

from __future__ import annotations


def test_transformer_classifier_learns(example, capsys) -> None:
    accuracy = example("keras_transformer_classifier").main(["--epochs", "3"])
    assert accuracy >= 0.9, capsys.readouterr().out  # chance is 0.5; 1.0 from seeds 0-2 here


def test_mobile_resnet_learns_the_digits(example, capsys) -> None:
    accuracy = example("keras_mobile_resnet_digits").main(["--epochs", "3"])
    assert accuracy >= 0.8, capsys.readouterr().out  # chance is 0.1
