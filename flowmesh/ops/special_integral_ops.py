"""Special integrals of ``tf.math.special``: ``Dawsn Expint FresnelCos FresnelSin Spence``
(TensorFlow's op types; kernels in ``kernels/special_integral_ops.py``).

* ``dawsn(x) = exp(-x^2) * integral_0^x exp(t^2) dt`` (Dawson's integral);
* ``expint(x) = Ei(x)``, the exponential integral ``-PV integral_{-x}^inf exp(-t)/t dt``;
* ``fresnel_cos(x) = integral_0^x cos(pi t^2 / 2) dt``, ``fresnel_sin`` likewise with sin;
* ``spence(x) = integral_1^x log(t) / (1 - t) dt`` (x >= 0; the dilogarithm ``Li2(1 - x)``).

Gradients are TensorFlow's (``math_grad.py``)::

    d dawsn = 1 - 2 x dawsn(x)     d expint = exp(x) / x
    d fresnel_cos = cos(pi x^2 / 2)     d fresnel_sin = sin(pi x^2 / 2)
    d spence = log(x) / (1 - x)  (-1 at x = 1)
"""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core.graph import Tensor
from flowmesh.ops import array_ops, math_ops
from flowmesh.ops.select_ops import where
from flowmesh.ops.special_function_builder import special_function


def _spence_grad(op: Any, grad: Tensor) -> list:
    x = op.inputs[0]
    partial = math_ops.log(x) / (1.0 - x)
    return [grad * where(math_ops.equal(x, array_ops.ones_like(x)), -array_ops.ones_like(x), partial)]


dawsn = special_function(
    "Dawsn", "dawsn", lambda op, g: [g * (1.0 - 2.0 * op.inputs[0] * op.outputs[0])],
    "Dawson's integral ``exp(-x^2) * integral_0^x exp(t^2) dt``, elementwise.")
expint = special_function(
    "Expint", "expint", lambda op, g: [g * math_ops.exp(op.inputs[0]) / op.inputs[0]],
    "The exponential integral ``Ei(x)``, elementwise (``-inf`` at 0, NaN for x < 0 as in "
    "TensorFlow).")
fresnel_cos = special_function(
    "FresnelCos", "fresnel_cos", lambda op, g: [
        g * math_ops.cos((math.pi / 2.0) * math_ops.square(op.inputs[0]))],
    "The Fresnel cosine integral ``integral_0^x cos(pi t^2 / 2) dt``, elementwise.")
fresnel_sin = special_function(
    "FresnelSin", "fresnel_sin", lambda op, g: [
        g * math_ops.sin((math.pi / 2.0) * math_ops.square(op.inputs[0]))],
    "The Fresnel sine integral ``integral_0^x sin(pi t^2 / 2) dt``, elementwise.")
spence = special_function(
    "Spence", "spence", _spence_grad,
    "Spence's function ``integral_1^x log(t) / (1 - t) dt``, elementwise (NaN for x < 0).")
