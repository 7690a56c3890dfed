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

from flowmesh.keras import (
    backend_activations,
    backend_control,
    backend_conv,
    backend_losses,
    backend_math,
    backend_random,
)
from flowmesh.keras.backend_state import (  # noqa: F401 - re-exported
    _LEARNING_PHASES,
    batch_get_value,
    batch_set_value,
    clear_session,
    constant,
    epsilon,
    eval,
    floatx,
    function,
    get_session,
    get_uid,
    get_value,
    image_data_format,
    int_shape,
    learning_phase,
    manual_variable_initialization,
    name_scope,
    placeholder,
    require_devices,
    reset_uids,
    set_epsilon,
    set_floatx,
    set_image_data_format,
    set_learning_phase,
    set_session,
    set_value,
    smart_cond,
    training_value,
    unique_object_name,
    variable,
)

# Assigned, not imported by name: several are named like builtins (``max``, ``sum``).
for _module in (backend_math, backend_activations, backend_losses, backend_conv, backend_random,
                backend_control):
    globals().update({name: getattr(_module, name) for name in _module.__all__})
del _module


def backend() -> str:
    """The backend's name: ``"tensorflow"`` (flowmesh speaks TensorFlow's API)."""
    return "tensorflow"
