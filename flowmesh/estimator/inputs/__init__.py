"""``tf.estimator.inputs``: ``numpy_input_fn`` and ``pandas_input_fn`` (TensorFlow 1.x's
input functions of the Estimator tutorials), built on ``tf.data`` instead of feeding
queues: the same batches, epochs and shuffling options."""

from flowmesh.estimator.inputs.numpy_io import numpy_input_fn
from flowmesh.estimator.inputs.pandas_io import pandas_input_fn

__all__ = ["numpy_input_fn", "pandas_input_fn"]
