"""Circulant operators: ``LinearOperatorCirculant`` (``A x = ifft(spectrum * fft(x))``, the
first column of ``A`` is ``ifft(spectrum)``), and the block-circulant ``...2D`` / ``...3D``
(transforms over 2 or 3 nested block dimensions, ``N = N0 * N1 (* N2)``). Products and
solves are FFTs, determinants products of the spectrum. The spectrum's block sizes must be
static."""

from __future__ import annotations

import math
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor
from flowmesh.core.shapes import TensorShape
from flowmesh.ops import array_ops, cast_ops, math_ops, reduction_ops
from flowmesh.ops.complex_ops import complex as make_complex
from flowmesh.ops.complex_ops import conj, real
from flowmesh.ops.fft_ops import fft, fft2d, fft3d, ifft, ifft2d, ifft3d
from flowmesh.ops.linalg_ops import matrix_transpose
from flowmesh.ops.linear_operator.base import LinearOperator, adjoint_if

_TRANSFORMS = {1: (fft, ifft), 2: (fft2d, ifft2d), 3: (fft3d, ifft3d)}
_COMPLEX = {dtypes.float16: dtypes.complex64, dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128,
            dtypes.complex64: dtypes.complex64, dtypes.complex128: dtypes.complex128}


class _BaseCirculant(LinearOperator):
    """Shared implementation for ``block_depth`` 1, 2, 3."""

    block_depth = 1

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str | None = None):
        out = dtypes.as_dtype(input_output_dtype)
        s = convert_to_tensor(spectrum, name="spectrum")
        if s.dtype not in _COMPLEX:
            raise TypeError(f"{name}: spectrum must be floating or complex, got {s.dtype.name}")
        d = self.block_depth
        if s.shape.rank is None or s.shape.rank < d or None in s.shape.as_list()[-d:]:
            raise ValueError(f"{name}: spectrum needs {d} static trailing block dimension(s), got shape {s.shape}")
        self._block_shape = s.shape.as_list()[-d:]
        cdtype = _COMPLEX[s.dtype]
        self._spectrum = s if s.dtype.is_complex else make_complex(s, array_ops.zeros_like(s))
        if self._spectrum.dtype != cdtype:
            self._spectrum = cast_ops.cast(self._spectrum, cdtype)
        self._spectrum_input = s
        super().__init__(out, None, is_non_singular, is_self_adjoint, is_positive_definite, is_square, name,
                         {"spectrum": spectrum, "input_output_dtype": input_output_dtype})

    @property
    def spectrum(self) -> Tensor:
        return self._spectrum_input

    @property
    def block_shape(self) -> TensorShape:
        return TensorShape(self._block_shape)

    def block_shape_tensor(self) -> Tensor:
        """The block sizes ``[N0 (, N1 (, N2))]`` (int32)."""
        return convert_to_tensor(self._block_shape, dtype=dtypes.int32)

    def convolution_kernel(self, name: str = "convolution_kernel") -> Tensor:
        """The kernel ``ifft(spectrum)`` (the first column of ``A`` in block shape)."""
        with self.name_scope(name):
            kernel = _TRANSFORMS[self.block_depth][1](self._spectrum)
            return kernel if self.dtype.is_complex else cast_ops.cast(real(kernel), self.dtype)

    def assert_hermitian_spectrum(self, name: str = "assert_hermitian_spectrum") -> Any:
        """An op failing unless the spectrum is Hermitian (``A`` real): the kernel's
        imaginary parts vanish (to 100 ulp of the spectrum's size)."""
        from flowmesh.ops import check_ops
        from flowmesh.ops.complex_ops import imag

        with self.name_scope(name):
            kernel = _TRANSFORMS[self.block_depth][1](self._spectrum)
            scale = reduction_ops.reduce_max(math_ops.abs(self._spectrum))
            eps = 1e-5 if self._spectrum.dtype == dtypes.complex64 else 1e-12
            return check_ops.assert_less_equal(math_ops.abs(imag(kernel)), eps * (1.0 + scale),
                                               message=f"{self.name}: spectrum is not Hermitian")

    def _shape(self) -> TensorShape:
        n = math.prod(self._block_shape)
        return self._spectrum.shape[:-self.block_depth].concatenate([n, n])

    def _shape_tensor(self) -> Tensor:
        n = math.prod(self._block_shape)
        return array_ops.concat([array_ops.shape(self._spectrum)[:-self.block_depth], [n, n]], 0)

    def _apply(self, x: Tensor, adjoint: bool, adjoint_arg: bool, divide: bool) -> Tensor:
        """``ifft(spectrum * fft(x))`` (``/`` for solves) over the block dimensions of ``x``'s columns."""
        forward, inverse = _TRANSFORMS[self.block_depth]
        columns = matrix_transpose(adjoint_if(x, adjoint_arg))
        if not columns.dtype.is_complex:
            columns = cast_ops.cast(columns, self._spectrum.dtype)
        lead = array_ops.shape(columns)[:-1]
        blocks = array_ops.reshape(columns, array_ops.concat([lead, self._block_shape], 0))
        spectrum = conj(self._spectrum) if adjoint else self._spectrum
        spectrum = array_ops.expand_dims(spectrum, -self.block_depth - 1)
        transformed = forward(blocks)
        product = inverse(transformed / spectrum if divide else transformed * spectrum)
        flat_shape = array_ops.concat([array_ops.shape(product)[:-self.block_depth], [math.prod(self._block_shape)]], 0)
        result = matrix_transpose(array_ops.reshape(product, flat_shape))
        if self.dtype.is_complex:
            return result if result.dtype == self.dtype else cast_ops.cast(result, self.dtype)
        return cast_ops.cast(real(result), self.dtype)

    def _matmul(self, x: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._apply(x, adjoint, adjoint_arg, divide=False)

    def _solve(self, rhs: Tensor, adjoint: bool, adjoint_arg: bool) -> Tensor:
        return self._apply(rhs, adjoint, adjoint_arg, divide=True)

    def _eigvals(self) -> Tensor:
        n = math.prod(self._block_shape)
        flat = array_ops.reshape(self._spectrum, array_ops.concat(
            [array_ops.shape(self._spectrum)[:-self.block_depth], [n]], 0))
        return flat if self.dtype.is_complex else cast_ops.cast(real(flat), self.dtype)

    def _axes(self) -> list[int]:
        return list(range(-self.block_depth, 0))

    def _determinant(self) -> Tensor:
        value = reduction_ops.reduce_prod(self._spectrum, axis=self._axes())
        return value if self.dtype.is_complex else cast_ops.cast(real(value), self.dtype)

    def _log_abs_determinant(self) -> Tensor:
        value = reduction_ops.reduce_sum(math_ops.log(math_ops.abs(self._spectrum)), axis=self._axes())
        return cast_ops.cast(value, self.dtype.real_dtype)


class LinearOperatorCirculant(_BaseCirculant):
    """A circulant ``[..., N, N]`` operator given by its spectrum ``[..., N]``."""

    block_depth = 1

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str = "LinearOperatorCirculant"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)


class LinearOperatorCirculant2D(_BaseCirculant):
    """A block-circulant operator with circulant blocks, spectrum ``[..., N0, N1]``."""

    block_depth = 2

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str = "LinearOperatorCirculant2D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)


class LinearOperatorCirculant3D(_BaseCirculant):
    """Doubly nested block-circulant operator, spectrum ``[..., N0, N1, N2]``."""

    block_depth = 3

    def __init__(self, spectrum: Any, input_output_dtype: Any = dtypes.complex64, is_non_singular: bool | None = None,
                 is_self_adjoint: bool | None = None, is_positive_definite: bool | None = None,
                 is_square: bool = True, name: str = "LinearOperatorCirculant3D"):
        super().__init__(spectrum, input_output_dtype, is_non_singular, is_self_adjoint, is_positive_definite,
                         is_square, name)
