"""Modified Bessel functions of the first kind: ``BesselI0 BesselI0e BesselI1 BesselI1e``
(TensorFlow's op types; ``e`` = exponentially scaled, ``i0e(x) = exp(-|x|) i0(x)``).

Gradients are TensorFlow's (``special_math_grad.py``)::

    d i0  = i1                     d i0e = i1e - sign(x) i0e
    d i1  = i0 - i1 / x            d i1e = i0e - i1e (sign(x) + 1 / x)     (both 1/2 at x = 0)
"""

from __future__ import annotations

from flowmesh.ops import math_ops
from flowmesh.ops.special_function_builder import at_zero_half, special_function

bessel_i0 = special_function(
    "BesselI0", "bessel_i0", lambda op, g: [g * bessel_i1(op.inputs[0])],
    "The modified Bessel function of the first kind of order 0, elementwise.")
bessel_i0e = special_function(
    "BesselI0e", "bessel_i0e", lambda op, g: [
        g * (bessel_i1e(op.inputs[0]) - math_ops.sign(op.inputs[0]) * op.outputs[0])],
    "``exp(-|x|) * bessel_i0(x)``, elementwise (no overflow for large ``|x|``).")
bessel_i1 = special_function(
    "BesselI1", "bessel_i1", lambda op, g: [
        g * at_zero_half(op.inputs[0], lambda s: bessel_i0(s) - bessel_i1(s) / s)],
    "The modified Bessel function of the first kind of order 1, elementwise.")
bessel_i1e = special_function(
    "BesselI1e", "bessel_i1e", lambda op, g: [
        g * at_zero_half(op.inputs[0],
                         lambda s: bessel_i0e(s) - bessel_i1e(s) * (math_ops.sign(s) + 1.0 / s))],
    "``exp(-|x|) * bessel_i1(x)``, elementwise.")
