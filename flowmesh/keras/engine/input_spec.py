"""``tf.keras.layers.InputSpec``: the rank / axis sizes a layer accepts, checked on every call."""

from __future__ import annotations

from typing import Any


class InputSpec:
    """What a layer expects of one input: ``ndim``, ``min_ndim``, ``max_ndim``, ``dtype``,
    ``shape`` and fixed sizes of some ``axes`` (``{-1: 784}``)."""

    def __init__(self, dtype: Any = None, shape: Any = None, ndim: int | None = None,
                 max_ndim: int | None = None, min_ndim: int | None = None,
                 axes: dict[int, int] | None = None, allow_last_axis_squeeze: bool = False):
        self.dtype = dtype
        self.shape = tuple(shape) if shape is not None else None
        self.ndim = len(self.shape) if self.shape is not None else ndim
        self.max_ndim, self.min_ndim = max_ndim, min_ndim
        self.axes = dict(axes or {})

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in (("dtype", self.dtype), ("shape", self.shape), ("ndim", self.ndim),
                                          ("max_ndim", self.max_ndim), ("min_ndim", self.min_ndim),
                                          ("axes", self.axes or None)) if v is not None]
        return f"InputSpec({', '.join(parts)})"


def check_input(spec: InputSpec, dims: list[int | None] | None, layer_name: str, index: int,
                source: str) -> None:
    """Raises ValueError naming the layer, the input's producer and both shapes."""
    if dims is None:
        return
    rank = len(dims)
    shown = tuple(dims)

    def fail(expected: str) -> None:
        raise ValueError(
            f"Input {index} of layer \"{layer_name}\" is incompatible with the layer: {expected}, "
            f"but received input with shape {shown}{source}."
        )

    if spec.ndim is not None and rank != spec.ndim:
        fail(f"expected ndim={spec.ndim}, found ndim={rank}")
    if spec.max_ndim is not None and rank > spec.max_ndim:
        fail(f"expected max_ndim={spec.max_ndim}, found ndim={rank}")
    if spec.min_ndim is not None and rank < spec.min_ndim:
        fail(f"expected min_ndim={spec.min_ndim}, found ndim={rank}")
    for axis, value in spec.axes.items():
        if value is None or not -rank <= axis < rank:
            continue
        if dims[axis] is not None and dims[axis] != value:
            fail(f"expected axis {axis} of input shape to have value {value}")
    if spec.shape is not None:
        for want, got in zip(spec.shape, dims):
            if want is not None and got is not None and want != got:
                fail(f"expected shape={spec.shape}")
