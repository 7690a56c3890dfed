"""``tf.distributions`` (TensorFlow 1.x): probability distributions with ``sample``,
``log_prob``, ``prob``, ``cdf``, ``entropy``, moments and ``kl_divergence``."""

from __future__ import annotations

from flowmesh.distributions.base import (
    FULLY_REPARAMETERIZED,
    NOT_REPARAMETERIZED,
    Distribution,
    RegisterKL,
    ReparameterizationType,
    kl_divergence,
)
from flowmesh.distributions.continuous import Beta, Exponential, Gamma, Laplace, Normal, StudentT, Uniform
from flowmesh.distributions.discrete import (
    Bernoulli,
    Categorical,
    Dirichlet,
    DirichletMultinomial,
    Multinomial,
)

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Bernoulli", "Beta", "Categorical", "Dirichlet",
           "DirichletMultinomial", "Distribution", "Exponential", "Gamma", "Laplace", "Multinomial", "Normal",
           "RegisterKL", "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]
