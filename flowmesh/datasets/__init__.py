"""Small data sets shipped inside the package (no network access at run time)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

_HERE = Path(__file__).parent


def load_digits(flatten: bool = True, normalize: bool = True, test_fraction: float = 0.2,
                seed: int = 0) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The 8x8 handwritten digits (1797 images, 10 classes; see LICENSE-digits.txt).

    Args:
        flatten: return images as ``[N, 64]`` (else ``[N, 8, 8, 1]``, NHWC).
        normalize: scale pixels from 0..16 to 0..1 float32.
        test_fraction: share of samples held out for testing (stratification-free split).
        seed: seed of the shuffle deciding the split.

    Returns:
        ``((x_train, y_train), (x_test, y_test))`` with int64 labels.
    """
    with np.load(_HERE / "digits.npz") as data:
        images, labels = data["images"], data["labels"].astype(np.int64)
    x = images.astype(np.float32) / 16.0 if normalize else images.astype(np.float32)
    x = x.reshape(len(x), 64) if flatten else x.reshape(len(x), 8, 8, 1)
    order = np.random.RandomState(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return (x[train], labels[train]), (x[test], labels[test])


def load_mnist_like(seed: int = 0) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The 8x8 digits in the form of ``tf.keras.datasets.mnist.load_data()``: ``uint8``
    28x28 images (each pixel repeated 3x3, a 2-pixel border) and ``uint8`` labels, so
    Keras's MNIST example programs run unchanged without MNIST's files (1437 training and
    360 test images instead of 60000 and 10000).

    Returns:
        ``((x_train, y_train), (x_test, y_test))``.
    """
    (x_train, y_train), (x_test, y_test) = load_digits(flatten=False, normalize=False, seed=seed)

    def upscale(x: np.ndarray) -> np.ndarray:
        big = np.kron(x[..., 0], np.ones((1, 3, 3), np.float32))
        return np.pad(np.round(big * (255 / 16)), ((0, 0), (2, 2), (2, 2))).astype(np.uint8)

    return (upscale(x_train), y_train.astype(np.uint8)), (upscale(x_test), y_test.astype(np.uint8))
