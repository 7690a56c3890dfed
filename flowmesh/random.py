# ruff: noqa: F401 - a namespace module: every import is a re-export
"""``tf.random``: the TensorFlow 2 spellings of the random ops (``tf.random.normal`` is
``tf.random_normal``), with TensorFlow's graph-level / op-level seed rules."""

from flowmesh import random_experimental as experimental
from flowmesh.ops.candidate_sampling_ops import (
    all_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from flowmesh.ops.random_dist_ops import (
    fold_in,
    gamma,
    poisson,
    split,
    stateless_categorical,
    stateless_multinomial,
    stateless_parameterized_truncated_normal,
    stateless_truncated_normal,
)
from flowmesh.ops.random_dist_ops import stateless_random_binomial as stateless_binomial
from flowmesh.ops.random_dist_ops import stateless_random_gamma as stateless_gamma
from flowmesh.ops.random_dist_ops import stateless_random_normal as stateless_normal
from flowmesh.ops.random_dist_ops import stateless_random_poisson as stateless_poisson
from flowmesh.ops.random_dist_ops import stateless_random_uniform as stateless_uniform
from flowmesh.ops.random_generator import (
    Algorithm,
    Generator,
    create_rng_state,
    get_global_generator,
    set_global_generator,
)
from flowmesh.ops.random_ops import categorical, get_seed, multinomial, set_random_seed, truncated_normal
from flowmesh.ops.random_ops import random_normal as normal
from flowmesh.ops.random_ops import random_shuffle as shuffle
from flowmesh.ops.random_ops import random_uniform as uniform
from flowmesh.ops.unigram_sampling_ops import (
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
)
