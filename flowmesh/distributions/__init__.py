"""``tf.distributions`` (TensorFlow 1.x): probability distributions with ``sample``,
``log_prob``, ``prob``, ``cdf``, ``entropy``, moments and ``kl_divergence``."""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "distributions")

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Bernoulli", "Beta", "Categorical", "Dirichlet",
           "DirichletMultinomial", "Distribution", "Exponential", "Gamma", "Laplace", "Multinomial", "Normal",
           "RegisterKL", "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]
