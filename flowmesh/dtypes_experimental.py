"""``tf.dtypes.experimental``: the low-precision dtypes (float8 and float4 formats, 2- and
4-bit integers), with ml_dtypes' NumPy types as in TensorFlow."""

from flowmesh.api_builder import fill_namespace as _fill_namespace

_fill_namespace(globals(), "dtypes.experimental")
