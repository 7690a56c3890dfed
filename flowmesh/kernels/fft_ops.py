"""Kernels of ``flowmesh/ops/fft_ops.py`` and ``complex_ops.py`` (``torch.fft``, complex views)."""

from __future__ import annotations

import torch

from flowmesh.kernels.contract.registry import simple_kernel

simple_kernel("FFT", lambda x: torch.fft.fft(x))
simple_kernel("IFFT", lambda x: torch.fft.ifft(x))
simple_kernel("FFT2D", lambda x: torch.fft.fft2(x))
simple_kernel("IFFT2D", lambda x: torch.fft.ifft2(x))
simple_kernel("FFT3D", lambda x: torch.fft.fftn(x, dim=(-3, -2, -1)))
simple_kernel("IFFT3D", lambda x: torch.fft.ifftn(x, dim=(-3, -2, -1)))
simple_kernel("Complex", lambda re, im: torch.complex(*torch.broadcast_tensors(re, im)))
simple_kernel("Real", lambda z: torch.real(z).clone())
simple_kernel("Imag", lambda z: torch.imag(z).clone())
simple_kernel("Conj", lambda z: torch.conj(z).resolve_conj())
simple_kernel("ComplexAbs", torch.abs)
simple_kernel("Angle", torch.angle)
