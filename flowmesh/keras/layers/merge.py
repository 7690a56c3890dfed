"""Merge layers: ``Add``, ``Subtract``, ``Multiply``, ``Average``, ``Maximum``, ``Minimum``,
``Concatenate``, ``Dot`` and their functional forms (``tf.keras.layers.add([...])``)."""

from __future__ import annotations

from typing import Any

from flowmesh.keras.engine.base_layer import Layer
from flowmesh.ops import array_ops, math_ops


class _Merge(Layer):
    """Combines a list of tensors of the same shape element-wise."""

    def _check(self, inputs: Any) -> list[Any]:
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer ({self.name}) should be called on a list of at least 2 inputs. "
                             f"Got {inputs!r}")
        return list(inputs)

    def build(self, input_shape: Any) -> None:
        shapes = [tuple(s.as_list()) if s is not None and s.rank is not None else None for s in input_shape]
        known = [s for s in shapes if s is not None]
        for s in known[1:]:
            if len(s) != len(known[0]) or any(a is not None and b is not None and a != b and 1 not in (a, b)
                                              for a, b in zip(s[1:], known[0][1:])):
                raise ValueError(f"Inputs have incompatible shapes. Received shapes {shapes}")
        self.built = True

    def _merge(self, inputs: list[Any]) -> Any:
        raise NotImplementedError

    def call(self, inputs: Any) -> Any:
        return self._merge(self._check(inputs))

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        from flowmesh.keras.layers.masking import merge_masks

        return merge_masks(inputs, mask)


class Add(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        return math_ops.add_n(inputs) if len(inputs) > 2 else math_ops.add(inputs[0], inputs[1])


class Subtract(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        if len(inputs) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs, got {len(inputs)}")
        return math_ops.subtract(inputs[0], inputs[1])


class Multiply(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.multiply(out, x)
        return out


class Average(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        return math_ops.multiply(math_ops.add_n(inputs), 1.0 / len(inputs))


class Maximum(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.maximum(out, x)
        return out


class Minimum(_Merge):
    def _merge(self, inputs: list[Any]) -> Any:
        out = inputs[0]
        for x in inputs[1:]:
            out = math_ops.minimum(out, x)
        return out


class Concatenate(_Merge):
    """Concatenates along ``axis`` (all other dimensions must agree)."""

    def __init__(self, axis: int = -1, **kwargs: Any):
        super().__init__(**kwargs)
        self.axis = axis

    def build(self, input_shape: Any) -> None:
        shapes = [tuple(s.as_list()) for s in input_shape if s is not None and s.rank is not None]
        if shapes:
            rank = len(shapes[0])
            axis = self.axis % rank
            for s in shapes[1:]:
                if len(s) != rank or any(a is not None and b is not None and a != b
                                         for i, (a, b) in enumerate(zip(s, shapes[0])) if i != axis):
                    raise ValueError(f"A `Concatenate` layer ({self.name}) requires inputs with matching shapes "
                                     f"except for the concatenation axis {self.axis}. Received: input_shape="
                                     f"{shapes}")
        self.built = True

    def _merge(self, inputs: list[Any]) -> Any:
        return array_ops.concat(inputs, self.axis)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        from flowmesh.keras.layers.masking import concat_masks

        return concat_masks(inputs, mask, self.axis)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axis": self.axis}


class Dot(_Merge):
    """Per-sample dot product of two inputs over ``axes`` (an int, or one per input);
    ``normalize=True`` L2-normalizes both along those axes first (cosine proximity)."""

    def __init__(self, axes: Any, normalize: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        if not isinstance(axes, int) and (not isinstance(axes, (list, tuple)) or len(axes) != 2
                                          or not all(isinstance(a, int) for a in axes)):
            raise ValueError(f"Invalid format for argument `axes`: expected an int or a list/tuple of 2 ints. "
                             f"Received: axes={axes}")
        self.axes, self.normalize = axes, normalize
        self.supports_masking = True

    def build(self, input_shape: Any) -> None:
        if not isinstance(input_shape, (list, tuple)) or len(input_shape) != 2:
            raise ValueError(f"A `Dot` layer should be called on a list of 2 inputs. Received: "
                             f"input_shape={input_shape}")
        self.built = True

    def _merge(self, inputs: list[Any]) -> Any:
        from flowmesh.keras import backend
        from flowmesh.ops.nn_norm_ops import l2_normalize

        if len(inputs) != 2:
            raise ValueError(f"A `Dot` layer should be called on exactly 2 inputs. Received: inputs={inputs}")
        x1, x2 = inputs
        given = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        axes = [a % x.shape.rank if a < 0 else a for a, x in zip(given, (x1, x2))]
        if self.normalize:
            x1, x2 = l2_normalize(x1, axis=axes[0]), l2_normalize(x2, axis=axes[1])
        return backend.batch_dot(x1, x2, axes)

    def compute_mask(self, inputs: Any, mask: Any = None) -> Any:
        return None

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "axes": self.axes, "normalize": self.normalize}


def dot(inputs: list[Any], axes: Any, normalize: bool = False, **kwargs: Any) -> Any:
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


def add(inputs: list[Any], **kwargs: Any) -> Any:
    return Add(**kwargs)(inputs)


def subtract(inputs: list[Any], **kwargs: Any) -> Any:
    return Subtract(**kwargs)(inputs)


def multiply(inputs: list[Any], **kwargs: Any) -> Any:
    return Multiply(**kwargs)(inputs)


def average(inputs: list[Any], **kwargs: Any) -> Any:
    return Average(**kwargs)(inputs)


def maximum(inputs: list[Any], **kwargs: Any) -> Any:
    return Maximum(**kwargs)(inputs)


def minimum(inputs: list[Any], **kwargs: Any) -> Any:
    return Minimum(**kwargs)(inputs)


def concatenate(inputs: list[Any], axis: int = -1, **kwargs: Any) -> Any:
    return Concatenate(axis=axis, **kwargs)(inputs)
