"""The oracle harness: op tests as a table of :class:`OpSpec` rows, checked five ways.

For every spec, :class:`OpHarness` builds the spec's graph from placeholders and checks

1. **forward** values against the spec's NumPy/torch ``reference`` (dtype tolerances);
2. **gradients** (``tf.gradients`` with random output cotangents) at the spec's dtype
   against float64 gradients, and float64 gradients against central finite differences;
3. **second order** (``second_order=True``): Hessian-vector products, i.e. gradients of
   ``sum(grad * v)``, against finite differences of that scalar;
4. **dynamic shapes** (``dynamic=True``): the same graph built from placeholders whose
   dimensions are all unknown gives the same values and gradients;
5. **TensorFlow** (``oracle=True``, only when ``tensorflow`` is importable): the same
   builder run by ``tensorflow.compat.v1`` in graph mode on identical inputs gives the
   same output dtypes, compatible static shapes, values, gradients (including which
   gradients are ``None`` and which are sparse ``IndexedSlices``) and second-order values.

How to add a spec
=================
Append an :class:`OpSpec` to a table (e.g. ``MATH_SPECS`` in ``tests/ops/test_math_ops.py``)::

    OpSpec("reduce_sum/axis1", lambda tf, x: tf.reduce_sum(x, axis=1),
           (Input((2, 3)),), reference=lambda x: x.sum(axis=1))

===================  ==========================================================================
field                meaning
===================  ==========================================================================
``name``             unique id, ``"op/variant"``; becomes the pytest id
``build``            ``f(tf, *placeholders)`` using only API shared by flowmesh and
                     ``tf.compat.v1``; take dtypes from inputs so the float64 rebuild works
``inputs``           :class:`Input` per placeholder: shape, dtype, ``kind`` (uniform, int,
                     bool, nonzero, distinct), range, ``maker(rng)``, ``diff``
``reference``        NumPy/torch function of the input arrays (optional)
``grad``             check first-order gradients of floating outputs (default True)
``second_order``     also check Hessian-vector products (default False)
``oracle``           compare with TensorFlow when installed (default True)
``dynamic``          also rebuild with unknown dimensions (default True)
``tolerance``        ``(rtol, atol)`` for forward values (default: per dtype)
``grad_tolerance``   ``(rtol, atol)`` for gradients (default: per dtype)
``fd_tolerance``     ``(rtol, atol)`` float64 gradients vs finite differences
===================  ==========================================================================

Keep shapes tiny: finite differences cost two graph runs per input element. Pick input
ranges away from kinks (``kind="distinct"`` for max/min, ``"nonzero"`` for abs and
denominators). In a test module::

    @pytest.mark.parametrize("spec", SPECS, ids=spec_ids(SPECS))
    def test_op(spec):
        OpHarness(spec).check()

    @pytest.mark.oracle
    @pytest.mark.parametrize("spec", ORACLE_SPECS, ids=spec_ids(ORACLE_SPECS))
    def test_op_matches_tensorflow(spec):
        OpHarness(spec).check_tensorflow(require_tensorflow())
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

from flowmesh.testing.op_spec import (
    FLOAT_DTYPES,
    Input,
    OpSpec,
    spec_ids,
)

__all__ = ["Input", "OpHarness", "OpSpec", "assert_close", "graph_op_types", "spec_ids"]


# --- comparisons ---------------------------------------------------------------------------
def assert_close(actual: Any, expected: Any, tolerance: tuple[float, float], what: str) -> None:
    """Asserts equal shapes and values within ``(rtol, atol)`` (exact for non-floats).

    Raises:
        AssertionError: naming ``what``, the worst element, both values and the tolerance.
    """
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {list(a.shape)} != expected {list(e.shape)}")
    if a.dtype == object or e.dtype == object or a.dtype.kind in "biu" and e.dtype.kind in "biu":
        if not np.array_equal(a, e):
            bad = np.argwhere(a != e)
            first = tuple(bad[0]) if len(bad) else ()
            raise AssertionError(f"{what}: {len(bad)} elements differ; first at {first}: "
                                 f"{a[first]!r} != expected {e[first]!r}")
        return
    af, ef = a.astype(np.float64), e.astype(np.float64)
    rtol, atol = tolerance
    ok = np.isclose(af, ef, rtol=rtol, atol=atol, equal_nan=True)
    if not ok.all():
        err = np.nan_to_num(np.where(ok, 0.0, np.abs(af - ef)), nan=np.inf)
        worst = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
        raise AssertionError(
            f"{what}: {int((~ok).sum())} of {ok.size} elements differ (rtol={rtol}, atol={atol});"
            f" worst at {tuple(int(i) for i in worst)}: {af[worst]!r} vs expected {ef[worst]!r}"
        )


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flatten(item)]
    return [value]


def _is_sparse(value: Any) -> bool:
    return value is not None and hasattr(value, "indices") and hasattr(value, "values")


def _dense(value: Any, shape: Sequence[int]) -> np.ndarray | None:
    """A fetched gradient as a dense float64 array (IndexedSlices are scattered-added)."""
    if value is None:
        return None
    if _is_sparse(value):
        dense_shape = shape if value.dense_shape is None else [int(d) for d in value.dense_shape]
        out = np.zeros(dense_shape, dtype=np.float64)
        np.add.at(out, np.asarray(value.indices), np.asarray(value.values, dtype=np.float64))
        return out
    return np.asarray(value, dtype=np.float64)


def _dtype_name(t: Any) -> str:
    return t.dtype.base_dtype.name if hasattr(t.dtype, "base_dtype") else t.dtype.name


# --- one built graph -----------------------------------------------------------------------
class _Built:
    """A spec's graph built by one framework (flowmesh or tf.compat.v1) at one dtype."""

    def __init__(self, tf: Any, spec: OpSpec, shapes: Sequence[tuple[int, ...]],
                 float_dtype: str | None = None, dynamic: bool = False, session_config: Any = None):
        self.tf, self.spec = tf, spec
        self.graph = tf.Graph()
        self.placeholders: list[Any] = []
        with self.graph.as_default():
            for i, (inp, dims) in enumerate(zip(spec.inputs, shapes)):
                dtype = float_dtype if float_dtype and inp.is_float else inp.dtype
                shape = [None] * len(dims) if dynamic else list(dims)
                self.placeholders.append(tf.placeholder(tf.as_dtype(dtype), shape, name=f"input{i}"))
            self.outputs = _flatten(spec.build(tf, *self.placeholders))
        self.float_outputs = [i for i, t in enumerate(self.outputs) if _dtype_name(t) in FLOAT_DTYPES]
        self.session = tf.Session(graph=self.graph, config=session_config)
        self.cotangent_inputs: list[Any] = []
        self.grads: list[Any] = []
        self.direction_inputs: list[Any] = []
        self.hvp_objective: Any = None
        self.hvp: list[Any] = []

    def close(self) -> None:
        self.session.close()

    def feed(self, arrays: Sequence[np.ndarray], cotangents: Sequence[np.ndarray] = (),
             directions: Sequence[np.ndarray] = ()) -> dict[Any, Any]:
        feed = dict(zip(self.placeholders, arrays))
        feed.update(zip(self.cotangent_inputs, cotangents))
        feed.update(zip(self.direction_inputs, directions))
        return feed

    def forward(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(v) for v in self.session.run(self.outputs, self.feed(arrays))]

    def add_gradients(self) -> None:
        """``tf.gradients`` of the floating outputs, weighted by fed cotangents."""
        tf = self.tf
        with self.graph.as_default():
            ys = [self.outputs[i] for i in self.float_outputs]
            self.cotangent_inputs = [tf.placeholder(y.dtype, y.shape, name=f"cotangent{k}")
                                     for k, y in enumerate(ys)]
            xs = [self.placeholders[j] for j in self.spec.diff_indices]
            self.grads = list(tf.gradients(ys, xs, grad_ys=self.cotangent_inputs)) if ys else \
                [None] * len(xs)

    def gradients(self, arrays: Sequence[np.ndarray], cotangents: Sequence[np.ndarray]) -> list[Any]:
        """Fetched gradients, raw (IndexedSlicesValue stays sparse), None where unconnected."""
        fetch = [g for g in self.grads if g is not None]
        values = iter(self.session.run(fetch, self.feed(arrays, cotangents)) if fetch else [])
        return [None if g is None else next(values) for g in self.grads]

    def forward_and_gradients(self, arrays: Sequence[np.ndarray],
                              cotangents: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[Any]]:
        """Outputs and (raw) gradients in one run."""
        fetch = [g for g in self.grads if g is not None]
        feed = self.feed(arrays, cotangents if self.cotangent_inputs else ())
        values = self.session.run(self.outputs + fetch, feed)
        rest = iter(values[len(self.outputs):])
        grads = [None if g is None else next(rest) for g in self.grads]
        return [np.asarray(v) for v in values[:len(self.outputs)]], grads

    def add_hvp(self) -> None:
        """Gradients of ``sum_j sum(grad_j * v_j)`` (Hessian-vector products)."""
        tf = self.tf
        with self.graph.as_default():
            terms, self.direction_inputs = [], []
            for k, (j, g) in enumerate(zip(self.spec.diff_indices, self.grads)):
                x = self.placeholders[j]
                v = tf.placeholder(x.dtype, x.shape, name=f"direction{k}")
                self.direction_inputs.append(v)
                if g is not None:
                    terms.append(tf.reduce_sum(tf.convert_to_tensor(g) * v))
            if not terms:
                raise AssertionError(f"{self.spec.name}: second_order needs a connected gradient")
            self.hvp_objective = terms[0] if len(terms) == 1 else tf.add_n(terms)
            xs = [self.placeholders[j] for j in self.spec.diff_indices]
            self.hvp = list(tf.gradients(self.hvp_objective, xs))

    def hvp_values(self, arrays: Sequence[np.ndarray], cotangents: Sequence[np.ndarray],
                   directions: Sequence[np.ndarray]) -> list[Any]:
        fetch = [g for g in self.hvp if g is not None]
        feed = self.feed(arrays, cotangents, directions)
        values = iter(self.session.run(fetch, feed) if fetch else [])
        return [None if g is None else next(values) for g in self.hvp]

    def objective(self, arrays: Sequence[np.ndarray], cotangents: Sequence[np.ndarray],
                  directions: Sequence[np.ndarray]) -> float:
        return float(self.session.run(self.hvp_objective, self.feed(arrays, cotangents, directions)))


def _finite_differences(fn: Any, arrays: list[np.ndarray], index: int, eps: float) -> np.ndarray:
    """Central differences of the scalar ``fn(arrays)`` w.r.t. ``arrays[index]``."""
    base = arrays[index]
    out = np.zeros(base.shape, dtype=np.float64)
    for k in range(base.size):
        values = []
        for sign in (1.0, -1.0):
            shifted = base.copy()
            shifted.reshape(-1)[k] += sign * eps
            probe = list(arrays)
            probe[index] = shifted
            values.append(fn(probe))
        out.reshape(-1)[k] = (values[0] - values[1]) / (2.0 * eps)
    return out


# --- the harness ---------------------------------------------------------------------------
class OpHarness:
    """Runs the checks of one :class:`OpSpec` (see the module docstring).

    Example:
        >>> OpHarness(spec).check()                        # flowmesh checks 1-4
        >>> OpHarness(spec).check_tensorflow(tf1)           # check 5
    """

    def __init__(self, spec: OpSpec):
        import flowmesh

        self.spec = spec
        self.fm = flowmesh
        self.arrays = spec.make_inputs()
        self.shapes = [a.shape for a in self.arrays]
        self._float64_arrays = [a.astype(np.float64) if inp.is_float else a
                                for a, inp in zip(self.arrays, spec.inputs)]

    # --- pieces shared by the checks -------------------------------------------------------
    @functools.cached_property
    def native(self) -> _Built:
        """flowmesh graph at the spec's dtypes, with gradients."""
        built = _Built(self.fm, self.spec, self.shapes)
        self.native_outputs = built.forward(self.arrays)
        if self.spec.diff_indices:
            built.add_gradients()
        return built

    @functools.cached_property
    def cotangents(self) -> list[np.ndarray]:
        """Random output cotangents (``grad_ys``), one per floating output."""
        built = self.native
        rng = np.random.default_rng(self.spec.seed + 7919)
        return [rng.uniform(-1.0, 1.0, self.native_outputs[i].shape).astype(self.native_outputs[i].dtype)
                for i in built.float_outputs]

    @functools.cached_property
    def directions(self) -> list[np.ndarray]:
        """Random input directions for Hessian-vector products."""
        rng = np.random.default_rng(self.spec.seed + 104729)
        return [rng.uniform(-1.0, 1.0, self.arrays[j].shape).astype(self.arrays[j].dtype)
                for j in self.spec.diff_indices]

    def _float64(self, dynamic: bool = False) -> _Built:
        built = _Built(self.fm, self.spec, self.shapes, float_dtype="float64", dynamic=dynamic)
        built.add_gradients()
        return built

    def _cotangents64(self) -> list[np.ndarray]:
        return [c.astype(np.float64) for c in self.cotangents]

    def _shapes(self) -> list[tuple[int, ...]]:
        return [self.arrays[j].shape for j in self.spec.diff_indices]

    # --- checks ----------------------------------------------------------------------------
    def check(self) -> None:
        """Checks 1-4 (all flowmesh-only checks the spec asks for)."""
        try:
            self.check_forward()
            if self.spec.diff_indices:
                self.check_gradients()
                if self.spec.second_order:
                    self.check_second_order()
            if self.spec.dynamic:
                self.check_dynamic_shapes()
        finally:
            self.close()

    def close(self) -> None:
        if "native" in self.__dict__:
            self.native.close()

    def check_forward(self) -> list[np.ndarray]:
        """Forward values against the reference (when the spec has one)."""
        built = self.native
        outputs = self.native_outputs
        if self.spec.reference is None:
            return outputs
        expected = _flatten(self.spec.reference(*[a.copy() for a in self.arrays]))
        if len(expected) != len(outputs):
            raise AssertionError(f"{self.spec.name}: {len(outputs)} outputs but the reference "
                                 f"returned {len(expected)}")
        for k, (out, ref, t) in enumerate(zip(outputs, expected, built.outputs)):
            ref = ref.numpy() if hasattr(ref, "numpy") else np.asarray(ref)
            tol = self.spec.forward_tolerance(_dtype_name(t))
            assert_close(out, ref, tol, f"{self.spec.name}: output {k} ({t.name}) vs reference")
        return outputs

    def check_gradients(self) -> None:
        """Spec-dtype gradients vs float64 gradients vs central finite differences."""
        spec, shapes = self.spec, self._shapes()
        native = [_dense(g, s) for g, s in zip(self.native.gradients(self.arrays, self.cotangents), shapes)]
        built = self._float64()
        try:
            cot = self._cotangents64()
            analytic = [_dense(g, s) for g, s in zip(built.gradients(self._float64_arrays, cot), shapes)]

            def objective(arrays: list[np.ndarray]) -> float:
                outs = built.forward(arrays)
                return sum(float(np.sum(outs[i] * c)) for i, c in zip(built.float_outputs, cot))

            for k, j in enumerate(spec.diff_indices):
                numeric = _finite_differences(objective, self._float64_arrays, j, spec.fd_eps)
                what = f"{spec.name}: d/d input{j}"
                if analytic[k] is None:
                    assert_close(numeric, np.zeros_like(numeric), spec.fd_tolerance,
                                 f"{what} is None (unconnected) but finite differences are not 0")
                    if native[k] is not None:
                        raise AssertionError(f"{what}: None in float64 but not at the spec dtype")
                    continue
                assert_close(analytic[k], numeric, spec.fd_tolerance,
                             f"{what} (float64) vs finite differences")
                if native[k] is None:
                    raise AssertionError(f"{what}: None at the spec dtype but not in float64")
                tol = spec.gradient_tolerance(spec.inputs[j].dtype)
                assert_close(native[k], analytic[k], tol, f"{what} ({spec.inputs[j].dtype}) vs float64")
        finally:
            built.close()

    def check_second_order(self) -> None:
        """float64 Hessian-vector products vs finite differences of ``sum(grad * v)``."""
        spec, shapes = self.spec, self._shapes()
        built = self._float64()
        try:
            built.add_hvp()
            cot = self._cotangents64()
            dirs = [d.astype(np.float64) for d in self.directions]
            analytic = [_dense(g, s) for g, s in zip(built.hvp_values(self._float64_arrays, cot, dirs), shapes)]
            for k, j in enumerate(spec.diff_indices):
                numeric = _finite_differences(lambda a: built.objective(a, cot, dirs),
                                              self._float64_arrays, j, spec.fd_eps)
                what = f"{spec.name}: second-order d/d input{j}"
                expected = np.zeros_like(numeric) if analytic[k] is None else analytic[k]
                assert_close(expected, numeric, (spec.fd_tolerance[0] * 10, spec.fd_tolerance[1] * 10),
                             f"{what} (float64) vs finite differences")
        finally:
            built.close()

    def check_dynamic_shapes(self) -> None:
        """Placeholders with unknown dimensions give the same float64 values and gradients."""
        spec, shapes = self.spec, self._shapes()
        static, dynamic = self._float64(), self._float64(dynamic=True)
        try:
            cot = self._cotangents64()
            for k, (a, b) in enumerate(zip(static.forward(self._float64_arrays),
                                           dynamic.forward(self._float64_arrays))):
                assert_close(b, a, (1e-12, 1e-12), f"{spec.name}: output {k} with unknown input dims")
            pairs = zip(static.gradients(self._float64_arrays, cot),
                        dynamic.gradients(self._float64_arrays, cot), spec.diff_indices, shapes)
            for a, b, j, s in pairs:
                if (a is None) != (b is None):
                    raise AssertionError(f"{spec.name}: d/d input{j} is None only with "
                                         f"{'static' if a is None else 'unknown'} input dims")
                if a is not None:
                    assert_close(_dense(b, s), _dense(a, s), (1e-10, 1e-12),
                                 f"{spec.name}: d/d input{j} with unknown input dims")
        finally:
            static.close()
            dynamic.close()

    def check_tensorflow(self, tf1: Any) -> None:
        """Check 5: dtypes, static shapes, values and gradients equal TensorFlow's."""
        from flowmesh.testing.tf_oracle import bfloat16_unsupported_reason, session_config

        spec = self.spec
        reason = bfloat16_unsupported_reason()
        if reason and any(i.dtype == "bfloat16" for i in spec.inputs):
            import pytest

            pytest.skip(reason)
        theirs = _Built(tf1, spec, self.shapes, session_config=session_config(tf1))
        try:
            if spec.diff_indices:
                theirs.add_gradients()
            values, grads = theirs.forward_and_gradients(self.arrays, self.cotangents)
            self._compare_forward(theirs, values)
            if spec.diff_indices:
                self._compare_gradients(grads)
                if spec.second_order and spec.oracle_second_order:
                    self._compare_second_order(theirs)
        finally:
            theirs.close()
            self.close()

    def _compare_forward(self, theirs: _Built, their_values: list[np.ndarray]) -> None:
        spec, ours = self.spec, self.native
        if len(ours.outputs) != len(theirs.outputs):
            raise AssertionError(f"{spec.name}: {len(ours.outputs)} outputs vs TensorFlow's "
                                 f"{len(theirs.outputs)}")
        for k, (a, b) in enumerate(zip(ours.outputs, theirs.outputs)):
            if _dtype_name(a) != _dtype_name(b):
                raise AssertionError(f"{spec.name}: output {k} dtype {_dtype_name(a)} != "
                                     f"TensorFlow's {_dtype_name(b)}")
            mine = None if a.shape.rank is None else a.shape.as_list()
            tfs = None if b.shape.rank is None else b.shape.as_list()
            if mine is not None and tfs is not None and (len(mine) != len(tfs) or any(
                    x is not None and y is not None and x != y for x, y in zip(mine, tfs))):
                raise AssertionError(f"{spec.name}: output {k} static shape {mine} is "
                                     f"incompatible with TensorFlow's {tfs}")
            assert_close(self.native_outputs[k], their_values[k], spec.forward_tolerance(_dtype_name(a)),
                         f"{spec.name}: output {k} vs TensorFlow")

    def _compare_gradients(self, their: list[Any]) -> None:
        spec, shapes = self.spec, self._shapes()
        mine = self.native.gradients(self.arrays, self.cotangents)
        for a, b, j, s in zip(mine, their, spec.diff_indices, shapes):
            what = f"{spec.name}: d/d input{j}"
            if (a is None) != (b is None):
                raise AssertionError(f"{what} is {'None' if a is None else 'connected'} in flowmesh "
                                     f"but {'None' if b is None else 'connected'} in TensorFlow")
            if a is None:
                continue
            if _is_sparse(a) != _is_sparse(b):
                raise AssertionError(f"{what} is {'IndexedSlices' if _is_sparse(a) else 'dense'} in "
                                     f"flowmesh but {'IndexedSlices' if _is_sparse(b) else 'dense'} in "
                                     "TensorFlow")
            tol = spec.gradient_tolerance(spec.inputs[j].dtype)
            assert_close(_dense(a, s), _dense(b, s), tol, f"{what} vs TensorFlow")

    def _compare_second_order(self, theirs: _Built) -> None:
        spec, shapes = self.spec, self._shapes()
        self.native.add_hvp()
        theirs.add_hvp()
        args = (self.arrays, self.cotangents, self.directions)
        for a, b, j, s in zip(self.native.hvp_values(*args), theirs.hvp_values(*args),
                              spec.diff_indices, shapes):
            what = f"{spec.name}: second-order d/d input{j}"
            if (a is None) != (b is None):
                a_state, b_state = ("None" if v is None else "connected" for v in (a, b))
                raise AssertionError(f"{what} is {a_state} in flowmesh but {b_state} in TensorFlow")
            if a is not None:
                rtol, atol = spec.gradient_tolerance(spec.inputs[j].dtype)
                assert_close(_dense(a, s), _dense(b, s), (rtol * 10, atol * 10), f"{what} vs TensorFlow")


def graph_op_types(spec: OpSpec, gradients: bool = True) -> set[str]:
    """Op types in the spec's flowmesh graph, with its gradient (and second-order) ops when
    ``gradients``, without running it: used to check that a table covers every op of a
    module."""
    import flowmesh

    built = _Built(flowmesh, spec, [a.shape for a in spec.make_inputs()])
    try:
        if gradients and spec.diff_indices:
            built.add_gradients()
            if spec.second_order and any(g is not None for g in built.grads):
                built.add_hvp()
        return {op.type for op in built.graph.get_operations()}
    finally:
        built.close()
