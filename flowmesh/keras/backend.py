"""``tf.keras.backend`` in graph mode (``K.*``).

The state (the Keras session of each graph, which initializes the variables Keras made;
the learning phase, a boolean placeholder that ``fit`` feeds; unique layer names and the
settings ``floatx``/``epsilon``/``image_data_format``) lives in
:mod:`flowmesh.keras.backend_state`; the tensor functions (``K.sum``, ``K.batch_dot``...)
in :mod:`flowmesh.keras.backend_math`; the neural-network ones in
:mod:`~flowmesh.keras.backend_activations` (``K.relu``, ``K.bias_add``...),
:mod:`~flowmesh.keras.backend_losses` (``K.categorical_crossentropy``, CTC),
:mod:`~flowmesh.keras.backend_conv` (``K.conv2d``, pooling, padding, resizing),
:mod:`~flowmesh.keras.backend_random` (``K.random_normal``...) and
:mod:`~flowmesh.keras.backend_control` (``K.switch``, learning phase, ``K.rnn``). This
module is their public face, as tf-keras's ``backend`` is one namespace.
"""

from __future__ import annotations

from flowmesh.api_builder import fill_namespace as _fill_namespace
from flowmesh.keras.backend_state import _LEARNING_PHASES  # noqa: F401 - engine/compile_utils.py reads it here

_fill_namespace(globals(), "keras.backend")

