"""Keras's ``variational_autoencoder.py`` (the Keras 2 examples): a VAE of MLPs on MNIST,
in TensorFlow 1.x graph mode.

    python examples/keras_vae.py [--epochs 50] [--mnist]

The published program: an encoder ``Model`` giving ``z_mean``, ``z_log_var`` and ``z``
(the reparameterization trick in a ``Lambda`` with ``K.random_normal``), a decoder
``Model``, the VAE ``Model`` composing them, the loss (reconstruction binary cross entropy
times 784 plus the KL divergence, written with ``K.*``) attached with ``add_loss``, and
``compile(optimizer="adam")`` / ``fit(x_train, epochs, batch_size, validation_data=(x_test,
None))`` without targets. The data are the 8x8 digits in MNIST's form unless ``--mnist``.
Prints the test loss, and the loss of reconstructing every image as the mean image (a
VAE that learned beats it).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np

import flowmesh as tf
from flowmesh.datasets import load_mnist_like

keras = tf.keras
K = keras.backend
Lambda, Input, Dense = keras.layers.Lambda, keras.layers.Input, keras.layers.Dense
Model = keras.models.Model
binary_crossentropy = keras.losses.binary_crossentropy


def sampling(args):
    """Reparameterization trick by sampling from an isotropic unit Gaussian.

    # Arguments
        args (tensor): mean and log of variance of Q(z|X)
    # Returns
        z (tensor): sampled latent vector
    """
    z_mean, z_log_var = args
    batch = K.shape(z_mean)[0]
    dim = K.int_shape(z_mean)[1]
    # by default, random_normal has mean = 0 and std = 1.0
    epsilon = K.random_normal(shape=(batch, dim))
    return z_mean + K.exp(0.5 * z_log_var) * epsilon


def build(original_dim: int, intermediate_dim: int = 512, latent_dim: int = 2) -> tuple[Model, Model, Model]:
    """The encoder, decoder and VAE models, the VAE with its loss added."""
    input_shape = (original_dim,)
    inputs = Input(shape=input_shape, name="encoder_input")
    x = Dense(intermediate_dim, activation="relu")(inputs)
    z_mean = Dense(latent_dim, name="z_mean")(x)
    z_log_var = Dense(latent_dim, name="z_log_var")(x)
    # use reparameterization trick to push the sampling out as input
    z = Lambda(sampling, output_shape=(latent_dim,), name="z")([z_mean, z_log_var])
    encoder = Model(inputs, [z_mean, z_log_var, z], name="encoder")
    encoder.summary()

    latent_inputs = Input(shape=(latent_dim,), name="z_sampling")
    x = Dense(intermediate_dim, activation="relu")(latent_inputs)
    outputs = Dense(original_dim, activation="sigmoid")(x)
    decoder = Model(latent_inputs, outputs, name="decoder")
    decoder.summary()

    outputs = decoder(encoder(inputs)[2])
    vae = Model(inputs, outputs, name="vae_mlp")
    reconstruction_loss = binary_crossentropy(inputs, outputs)
    reconstruction_loss *= original_dim
    kl_loss = 1 + z_log_var - K.square(z_mean) - K.exp(z_log_var)
    kl_loss = K.sum(kl_loss, axis=-1)
    kl_loss *= -0.5
    vae_loss = K.mean(reconstruction_loss + kl_loss)
    vae.add_loss(vae_loss)
    vae.compile(optimizer="adam")
    vae.summary()
    return encoder, decoder, vae


def train(epochs: int = 50, batch_size: int = 128, mnist: bool = False, seed: int = 0,
          verbose: int = 2) -> tuple[float, float]:
    """Trains the VAE; returns its test loss and the mean-image baseline's loss."""
    (x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data() if mnist else load_mnist_like()
    image_size = x_train.shape[1]
    original_dim = image_size * image_size
    x_train = np.reshape(x_train, [-1, original_dim]).astype("float32") / 255
    x_test = np.reshape(x_test, [-1, original_dim]).astype("float32") / 255
    with tf.Graph().as_default():
        tf.set_random_seed(seed)
        np.random.seed(seed)
        encoder, decoder, vae = build(original_dim)
        vae.fit(x_train, epochs=epochs, batch_size=batch_size, validation_data=(x_test, None), verbose=verbose)
        test_loss = float(vae.evaluate(x_test, verbose=0, batch_size=batch_size))
        z_mean, _, _ = encoder.predict(x_test, batch_size=batch_size)
        assert z_mean.shape == (len(x_test), 2)
        assert decoder.predict(z_mean[:3]).shape == (3, original_dim)
    mean_image = np.clip(x_train.mean(0, keepdims=True), 1e-7, 1 - 1e-7)
    baseline = float(np.mean(-(x_test * np.log(mean_image) + (1 - x_test) * np.log(1 - mean_image)).sum(-1)))
    print(f"test loss {test_loss:.2f}; the mean image's reconstruction loss {baseline:.2f}")
    return test_loss, baseline


def main(argv: Sequence[str] | None = None) -> tuple[float, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--mnist", action="store_true", help="MNIST from the Keras cache")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return train(args.epochs, args.batch, args.mnist, args.seed)


if __name__ == "__main__":
    main()
