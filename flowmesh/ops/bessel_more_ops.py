"""Bessel functions of the first and second kind (``BesselJ0 BesselJ1 BesselY0 BesselY1``)
and modified ones of the second kind (``BesselK0 BesselK0e BesselK1 BesselK1e``;
``k0e(x) = exp(x) k0(x)``), TensorFlow's ``tf.math.special`` ops.

Gradients are TensorFlow's (``special_math_grad.py``)::

    d j0 = -j1      d j1 = j0 - j1 / x  (1/2 at x = 0)     d y0 = -y1      d y1 = y0 - y1 / x
    d k0 = -k1      d k0e = k0e - k1e    d k1 = -k0 - k1 / x      d k1e = -k0e - k1e (1 / x - 1)
"""

from __future__ import annotations

from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.core.registry import register_op
from flowmesh.ops._builders import same_shape
from flowmesh.ops.bessel_ops import _at_zero_half, _bessel


def _j1_grad(op: Any, grad: Tensor) -> list:
    return [grad * _at_zero_half(op.inputs[0], lambda s: bessel_j0(s) - bessel_j1(s) / s)]


register_op("BesselJ0", same_shape, grad=lambda op, g: [-g * bessel_j1(op.inputs[0])])
register_op("BesselJ1", same_shape, grad=_j1_grad)
register_op("BesselY0", same_shape, grad=lambda op, g: [-g * bessel_y1(op.inputs[0])])
register_op("BesselY1", same_shape, grad=lambda op, g: [
    g * (bessel_y0(op.inputs[0]) - op.outputs[0] / op.inputs[0])])
register_op("BesselK0", same_shape, grad=lambda op, g: [-g * bessel_k1(op.inputs[0])])
register_op("BesselK0e", same_shape, grad=lambda op, g: [g * (op.outputs[0] - bessel_k1e(op.inputs[0]))])
register_op("BesselK1", same_shape, grad=lambda op, g: [
    -g * (bessel_k0(op.inputs[0]) + op.outputs[0] / op.inputs[0])])
register_op("BesselK1e", same_shape, grad=lambda op, g: [
    g * (-op.outputs[0] * (1.0 / op.inputs[0] - 1.0) - bessel_k0e(op.inputs[0]))])


def bessel_j0(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the first kind of order 0, elementwise."""
    return _bessel("BesselJ0", x, name)


def bessel_j1(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the first kind of order 1, elementwise."""
    return _bessel("BesselJ1", x, name)


def bessel_y0(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the second kind of order 0, elementwise (NaN for x < 0)."""
    return _bessel("BesselY0", x, name)


def bessel_y1(x: Any, name: str | None = None) -> Tensor:
    """The Bessel function of the second kind of order 1, elementwise (NaN for x < 0)."""
    return _bessel("BesselY1", x, name)


def bessel_k0(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the second kind of order 0, elementwise."""
    return _bessel("BesselK0", x, name)


def bessel_k0e(x: Any, name: str | None = None) -> Tensor:
    """``exp(x) * bessel_k0(x)``, elementwise."""
    return _bessel("BesselK0e", x, name)


def bessel_k1(x: Any, name: str | None = None) -> Tensor:
    """The modified Bessel function of the second kind of order 1, elementwise."""
    return _bessel("BesselK1", x, name)


def bessel_k1e(x: Any, name: str | None = None) -> Tensor:
    """``exp(x) * bessel_k1(x)``, elementwise."""
    return _bessel("BesselK1e", x, name)
