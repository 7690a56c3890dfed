"""The objects TensorFlow's ``tf.flags`` changes from absl's: the global ``FLAGS`` that
parses on first read, and the ``DEFINE_*`` functions that take TF1's old keyword names.
Everything is registered in absl's global ``absl.flags.FLAGS``, as in TensorFlow."""

from __future__ import annotations

from absl import flags as _absl_flags

from flowmesh.flags.implicit_parse import ImplicitlyParsedFlagValues, accept_old_keyword_names

FLAGS = ImplicitlyParsedFlagValues(_absl_flags.FLAGS)
DEFINE_string = accept_old_keyword_names(_absl_flags.DEFINE_string)
DEFINE_boolean = accept_old_keyword_names(_absl_flags.DEFINE_boolean)
DEFINE_bool = DEFINE_boolean
DEFINE_float = accept_old_keyword_names(_absl_flags.DEFINE_float)
DEFINE_integer = accept_old_keyword_names(_absl_flags.DEFINE_integer)
