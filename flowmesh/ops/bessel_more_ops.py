"""Bessel functions of the first and second kind (``BesselJ0 BesselJ1 BesselY0 BesselY1``)
and modified ones of the second kind (``BesselK0 BesselK0e BesselK1 BesselK1e``;
``k0e(x) = exp(x) k0(x)``), TensorFlow's ``tf.math.special`` ops.

Gradients are TensorFlow's (``special_math_grad.py``)::

    d j0 = -j1      d j1 = j0 - j1 / x  (1/2 at x = 0)     d y0 = -y1      d y1 = y0 - y1 / x
    d k0 = -k1      d k0e = k0e - k1e    d k1 = -k0 - k1 / x      d k1e = -k0e - k1e (1 / x - 1)
"""

from __future__ import annotations

from flowmesh.ops.special_function_builder import at_zero_half, special_function

bessel_j0 = special_function(
    "BesselJ0", "bessel_j0", lambda op, g: [-g * bessel_j1(op.inputs[0])],
    "The Bessel function of the first kind of order 0, elementwise.")
bessel_j1 = special_function(
    "BesselJ1", "bessel_j1", lambda op, g: [
        g * at_zero_half(op.inputs[0], lambda s: bessel_j0(s) - bessel_j1(s) / s)],
    "The Bessel function of the first kind of order 1, elementwise.")
bessel_y0 = special_function(
    "BesselY0", "bessel_y0", lambda op, g: [-g * bessel_y1(op.inputs[0])],
    "The Bessel function of the second kind of order 0, elementwise (NaN for x < 0).")
bessel_y1 = special_function(
    "BesselY1", "bessel_y1", lambda op, g: [
        g * (bessel_y0(op.inputs[0]) - op.outputs[0] / op.inputs[0])],
    "The Bessel function of the second kind of order 1, elementwise (NaN for x < 0).")
bessel_k0 = special_function(
    "BesselK0", "bessel_k0", lambda op, g: [-g * bessel_k1(op.inputs[0])],
    "The modified Bessel function of the second kind of order 0, elementwise.")
bessel_k0e = special_function(
    "BesselK0e", "bessel_k0e", lambda op, g: [g * (op.outputs[0] - bessel_k1e(op.inputs[0]))],
    "``exp(x) * bessel_k0(x)``, elementwise.")
bessel_k1 = special_function(
    "BesselK1", "bessel_k1", lambda op, g: [
        -g * (bessel_k0(op.inputs[0]) + op.outputs[0] / op.inputs[0])],
    "The modified Bessel function of the second kind of order 1, elementwise.")
bessel_k1e = special_function(
    "BesselK1e", "bessel_k1e", lambda op, g: [
        g * (-op.outputs[0] * (1.0 / op.inputs[0] - 1.0) - bessel_k0e(op.inputs[0]))],
    "``exp(x) * bessel_k1(x)``, elementwise.")
