# ruff: noqa: F822 - __all__ lists names the export table binds (flowmesh/api_exports.py)
"""``tf.initializers`` of TensorFlow 1.x (``tf.compat.v1.initializers``): the graph-mode
initializer classes of ``tf.*_initializer`` (TensorFlow 1.x's defaults, e.g.
``random_normal``'s stddev 1.0, not Keras's 0.05) and the variable-initializing ops
(``global_variables``, ``local_variables``, ``variables``, ``tables_initializer``).
``tf.keras.initializers`` holds Keras's."""

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.ops import init_ops as _init
from flowmesh.ops import variables as _variables

_fill_namespace(globals(), "initializers")

constant = _init.Constant
glorot_normal = _init.GlorotNormal
glorot_uniform = _init.GlorotUniform
identity = _init.Identity
ones = _init.Ones
orthogonal = _init.Orthogonal
random_normal = _init.RandomNormal
random_uniform = _init.RandomUniform
truncated_normal = _init.TruncatedNormal
uniform_unit_scaling = _init.UniformUnitScaling
variance_scaling = _init.VarianceScaling
zeros = _init.Zeros
global_variables = _variables.global_variables_initializer
local_variables = _variables.local_variables_initializer
variables = _variables.variables_initializer

__all__ = ["constant", "global_variables", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "identity",
           "lecun_normal", "lecun_uniform", "local_variables", "ones", "orthogonal", "random_normal", "random_uniform",
           "tables_initializer", "truncated_normal", "uniform_unit_scaling", "variables", "variance_scaling", "zeros"]
