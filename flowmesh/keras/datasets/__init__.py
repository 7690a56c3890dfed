"""``tf.keras.datasets``: the classic datasets read from Keras's cache (``~/.keras/datasets``,
the files Keras downloads there). flowmesh does not download: a missing file raises an
error naming the file to place there and where Keras gets it from."""

from flowmesh.keras.datasets import boston_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters

__all__ = ["boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist", "reuters"]
