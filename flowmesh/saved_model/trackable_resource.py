"""``tf.saved_model.experimental.TrackableResource``: the base class of objects owning a
resource tensor (a lookup table, a queue...): the handle is created lazily, once, by the
subclass's ``_create_resource`` on the resource's device, as TensorFlow's base class does.
(TensorFlow also exports such objects in object-based SavedModels, which flowmesh does not
have; in a TF1 graph the handle is an ordinary graph tensor.)"""

from __future__ import annotations

import contextlib
from typing import Any

from flowmesh.core.graph import device as _device


class TrackableResource:
    """Holds one resource handle, created on first use.

    Subclasses implement ``_create_resource()`` (returning the handle tensor) and may
    implement ``_initialize()`` (the op filling the resource) and ``_destroy_resource()``.

    Args:
        device: the device the handle is created on (default: the current device scope).
    """

    def __init__(self, device: str = "") -> None:
        self._resource_handle_value: Any = None
        self._resource_device = device

    @classmethod
    def _resource_type(cls) -> str:
        return cls.__name__

    def _create_resource(self) -> Any:
        """Creates the resource handle; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement _create_resource() returning the "
                                  "resource handle tensor (TrackableResource._create_resource not implemented)")

    def _initialize(self) -> Any:
        """Initializes the resource (optional): returns the initializing op, or None."""
        return None

    def _destroy_resource(self) -> Any:
        """Destroys the resource (optional)."""
        return None

    @property
    def _resource_handle(self) -> Any:
        return self._resource_handle_value

    @_resource_handle.setter
    def _resource_handle(self, value: Any) -> None:
        self._resource_handle_value = value

    @property
    def resource_handle(self) -> Any:
        """The resource handle, created by ``_create_resource`` on ``device`` the first time."""
        if self._resource_handle is None:
            scope = _device(self._resource_device) if self._resource_device else contextlib.nullcontext()
            with scope:
                self._resource_handle = self._create_resource()
        return self._resource_handle
