"""Zero-padding and cropping layers: ``ZeroPadding1D/2D/3D``, ``Cropping1D/2D/3D``."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine.base_layer import Layer
from flowmesh.keras.engine.input_spec import InputSpec
from flowmesh.keras.layers.convolutional import normalize_data_format


def _pairs(value: Any, rank: int, name: str) -> tuple[tuple[int, int], ...]:
    """``1`` -> ``((1, 1),) * rank``; ``(a, b)`` -> ``((a, a), (b, b))`` for rank > 1, or
    ``((a, b),)`` for rank 1; a tuple of pairs as given."""
    if isinstance(value, int):
        return ((value, value),) * rank
    value = tuple(value)
    if rank == 1:
        if len(value) != 2:
            raise ValueError(f"`{name}` should have two elements. Received: {value}.")
        return ((int(value[0]), int(value[1])),)
    if len(value) != rank:
        raise ValueError(f"`{name}` should have {rank} elements. Received: {value}.")
    pairs = []
    for item in value:
        pairs.append((int(item), int(item)) if isinstance(item, int) else (int(item[0]), int(item[1])))
    return tuple(pairs)


class _Spatial(Layer):
    rank = 2
    _arg = "padding"

    def __init__(self, value: Any, data_format: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)
        setattr(self, self._arg, _pairs(value, self.rank, self._arg))
        self.input_spec = InputSpec(ndim=self.rank + 2)

    def _spatial_axes(self) -> list[int]:
        first = self.rank > 1 and self.data_format == "channels_first"
        return [i + (2 if first else 1) for i in range(self.rank)]

    def get_config(self) -> dict[str, Any]:
        config = {**super().get_config(), self._arg: getattr(self, self._arg)}
        if self.rank > 1:
            config["data_format"] = self.data_format
        return config


class _ZeroPadding(_Spatial):
    def call(self, inputs: Any) -> Any:
        pads = [[0, 0]] * inputs.shape.rank
        for axis, pair in zip(self._spatial_axes(), self.padding):
            pads[axis] = list(pair)
        from flowmesh.ops.manip_ops import pad

        return pad(inputs, pads)


class ZeroPadding1D(_ZeroPadding):
    """Pads the time axis of ``[batch, time, features]`` with zeros (``padding``: int or
    ``(left, right)``)."""

    rank = 1

    def __init__(self, padding: Any = 1, **kwargs: Any):
        super().__init__(padding, **kwargs)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["padding"] = config["padding"][0]
        return config


class ZeroPadding2D(_ZeroPadding):
    """Pads rows and columns with zeros (``padding``: int, ``(rows, cols)`` or
    ``((top, bottom), (left, right))``)."""

    rank = 2

    def __init__(self, padding: Any = (1, 1), data_format: str | None = None, **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    """Pads the three spatial axes with zeros."""

    rank = 3

    def __init__(self, padding: Any = (1, 1, 1), data_format: str | None = None, **kwargs: Any):
        super().__init__(padding, data_format, **kwargs)


class _Cropping(_Spatial):
    _arg = "cropping"

    def call(self, inputs: Any) -> Any:
        index: list[Any] = [slice(None)] * inputs.shape.rank
        for axis, (start, end) in zip(self._spatial_axes(), self.cropping):
            index[axis] = slice(start, -end if end else None)
        return inputs[tuple(index)]


class Cropping1D(_Cropping):
    """Drops ``cropping = (start, end)`` steps from the time axis."""

    rank = 1

    def __init__(self, cropping: Any = (1, 1), **kwargs: Any):
        super().__init__(cropping, **kwargs)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["cropping"] = config["cropping"][0]
        return config


class Cropping2D(_Cropping):
    """Drops rows and columns at the borders (``((top, bottom), (left, right))``)."""

    rank = 2

    def __init__(self, cropping: Any = ((0, 0), (0, 0)), data_format: str | None = None, **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(_Cropping):
    """Drops entries at the borders of the three spatial axes."""

    rank = 3

    def __init__(self, cropping: Any = ((1, 1), (1, 1), (1, 1)), data_format: str | None = None, **kwargs: Any):
        super().__init__(cropping, data_format, **kwargs)


__all__ = ["Cropping1D", "Cropping2D", "Cropping3D", "ZeroPadding1D", "ZeroPadding2D", "ZeroPadding3D"]
