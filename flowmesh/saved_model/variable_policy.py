"""``tf.saved_model.experimental.VariablePolicy``: how a SavedModel save treats variables
(``SaveOptions(experimental_variable_policy=...)``), TensorFlow's enum."""

from __future__ import annotations

import enum
from typing import Any


class VariablePolicy(enum.Enum):
    """``NONE``: variables saved without devices; ``SAVE_VARIABLE_DEVICES``: with their
    device assignments; ``EXPAND_DISTRIBUTED_VARIABLES``: devices, plus the components of
    distributed variables."""

    NONE = None
    SAVE_VARIABLE_DEVICES = "save_variable_devices"
    EXPAND_DISTRIBUTED_VARIABLES = "expand_distributed_variables"

    def _save_variable_devices(self) -> bool:
        """Whether variable devices are saved."""
        return self != VariablePolicy.NONE

    def _expand_distributed_variables(self) -> bool:
        """Whether distributed variables are saved with their components."""
        return self == VariablePolicy.EXPAND_DISTRIBUTED_VARIABLES

    @staticmethod
    def from_obj(obj: Any) -> VariablePolicy:
        """The policy ``obj`` names: None, a policy, or its value in any case.

        Raises:
            ValueError: ``obj`` names no policy.
        """
        if obj is None:
            return VariablePolicy.NONE
        if isinstance(obj, VariablePolicy):
            return obj
        key = str(obj).lower()
        for policy in VariablePolicy:
            if key == policy.value:
                return policy
        raise ValueError(f"Received invalid VariablePolicy value: {obj}. experimental_variable_policy must be "
                         "None or one of 'save_variable_devices', 'expand_distributed_variables' (or a "
                         "tf.saved_model.experimental.VariablePolicy)")
