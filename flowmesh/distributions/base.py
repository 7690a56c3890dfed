"""``tf.distributions``' base class, reparameterization types and the KL registry
(TensorFlow 1.x's ``tf.distributions``, deprecated there in favour of TensorFlow
Probability, with the same method names and fallbacks).

A subclass implements what it can of ``_log_prob _prob _cdf _log_cdf _mean _mode
_variance _stddev _entropy _quantile _sample_n _batch_shape``; the public methods fall back
as TensorFlow's do (``prob = exp(log_prob)``, ``stddev = sqrt(variance)`` ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Tensor, name_scope
from flowmesh.core.shapes import TensorShape


class ReparameterizationType:
    """Whether samples are differentiable functions of the parameters."""

    def __init__(self, rep_type: str):
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameterization Type: {self._rep_type}>"

    def __eq__(self, other: object) -> bool:
        return self is other

    __hash__ = object.__hash__


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


class Distribution:
    """A batch of probability distributions with the methods of ``tf.distributions``."""

    def __init__(self, dtype: Any, reparameterization_type: ReparameterizationType, validate_args: bool,
                 allow_nan_stats: bool, parameters: dict[str, Any] | None = None,
                 graph_parents: list[Any] | None = None, name: str | None = None):
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._reparameterization_type = reparameterization_type
        self._validate_args = validate_args
        self._allow_nan_stats = allow_nan_stats
        self._parameters = {k: v for k, v in (parameters or {}).items() if k not in ("self", "__class__")}
        self._graph_parents = graph_parents or []
        self._name = name or type(self).__name__

    # --- properties ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self._parameters)

    @property
    def reparameterization_type(self) -> ReparameterizationType:
        return self._reparameterization_type

    @property
    def allow_nan_stats(self) -> bool:
        return self._allow_nan_stats

    @property
    def validate_args(self) -> bool:
        return self._validate_args

    @property
    def batch_shape(self) -> TensorShape:
        return TensorShape(self._batch_shape())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Tensor:
        from flowmesh.ops.array_ops import shape

        with name_scope(f"{self._name}/{name}"):
            return shape(self._batch_shape_like())

    @property
    def event_shape(self) -> TensorShape:
        return TensorShape(self._event_shape())

    def event_shape_tensor(self, name: str = "event_shape_tensor") -> Tensor:
        with name_scope(f"{self._name}/{name}"):
            return convert_to_tensor(self.event_shape.as_list(), dtypes.int32)

    def is_scalar_batch(self, name: str = "is_scalar_batch") -> Tensor:
        return convert_to_tensor(self.batch_shape.rank == 0)

    def is_scalar_event(self, name: str = "is_scalar_event") -> Tensor:
        return convert_to_tensor(self.event_shape.rank == 0)

    def copy(self, **override_parameters_kwargs: Any) -> Distribution:
        """A new distribution of this class with some parameters replaced."""
        return type(self)(**{**self._parameters, **override_parameters_kwargs})

    # --- subclass hooks ----------------------------------------------------------------------
    def _batch_shape_like(self) -> Tensor:
        raise NotImplementedError

    def _batch_shape(self) -> Any:
        return self._batch_shape_like().shape

    def _event_shape(self) -> Any:
        return []

    # --- methods -------------------------------------------------------------------------------
    def _call(self, name: str, method: str, *args: Any) -> Tensor:
        fn = getattr(self, f"_{method}", None)
        if fn is None:
            raise NotImplementedError(f"{method} is not implemented: {type(self).__name__}")
        with name_scope(f"{self._name}/{name}"):
            return fn(*args)

    def _value(self, value: Any) -> Tensor:
        return convert_to_tensor(value, dtype=self._dtype, name="value")

    def sample(self, sample_shape: Any = (), seed: int | None = None, name: str = "sample") -> Tensor:
        """Samples of shape ``sample_shape + batch_shape + event_shape``."""
        from flowmesh.ops import array_ops

        with name_scope(f"{self._name}/{name}"):
            shape = convert_to_tensor(sample_shape, dtypes.int32, name="sample_shape")
            static = [int(d) for d in (sample_shape if isinstance(sample_shape, (list, tuple))
                                       else [sample_shape])] if not isinstance(sample_shape, Tensor) else None
            n = _prod(shape)
            samples = self._sample_n(n, seed)
            tail = array_ops.shape(samples)[1:]
            out = array_ops.reshape(samples, array_ops.concat([array_ops.reshape(shape, [-1]), tail], 0))
            if static is not None:
                tail_shape = self.batch_shape.concatenate(self.event_shape).merge_with(samples.shape[1:])
                out.set_shape(TensorShape(static).concatenate(tail_shape))
            return out

    def log_prob(self, value: Any, name: str = "log_prob") -> Tensor:
        from flowmesh.ops import math_ops

        if hasattr(self, "_log_prob"):
            return self._call(name, "log_prob", self._value(value))
        with name_scope(f"{self._name}/{name}"):
            return math_ops.log(self._prob(self._value(value)))

    def prob(self, value: Any, name: str = "prob") -> Tensor:
        from flowmesh.ops import math_ops

        if hasattr(self, "_prob"):
            return self._call(name, "prob", self._value(value))
        with name_scope(f"{self._name}/{name}"):
            return math_ops.exp(self._log_prob(self._value(value)))

    def cdf(self, value: Any, name: str = "cdf") -> Tensor:
        return self._call(name, "cdf", self._value(value))

    def log_cdf(self, value: Any, name: str = "log_cdf") -> Tensor:
        from flowmesh.ops import math_ops

        if hasattr(self, "_log_cdf"):
            return self._call(name, "log_cdf", self._value(value))
        with name_scope(f"{self._name}/{name}"):
            return math_ops.log(self._cdf(self._value(value)))

    def survival_function(self, value: Any, name: str = "survival_function") -> Tensor:
        with name_scope(f"{self._name}/{name}"):
            return 1.0 - self._cdf(self._value(value))

    def log_survival_function(self, value: Any, name: str = "log_survival_function") -> Tensor:
        from flowmesh.ops import math_ops

        with name_scope(f"{self._name}/{name}"):
            return math_ops.log1p(-self._cdf(self._value(value)))

    def quantile(self, value: Any, name: str = "quantile") -> Tensor:
        return self._call(name, "quantile", self._value(value))

    def mean(self, name: str = "mean") -> Tensor:
        return self._call(name, "mean")

    def mode(self, name: str = "mode") -> Tensor:
        return self._call(name, "mode")

    def entropy(self, name: str = "entropy") -> Tensor:
        return self._call(name, "entropy")

    def variance(self, name: str = "variance") -> Tensor:
        from flowmesh.ops import math_ops

        if hasattr(self, "_variance"):
            return self._call(name, "variance")
        if not hasattr(self, "_stddev"):
            raise NotImplementedError(f"variance is not implemented: {type(self).__name__}")
        with name_scope(f"{self._name}/{name}"):
            return math_ops.square(self._stddev())

    def stddev(self, name: str = "stddev") -> Tensor:
        from flowmesh.ops import math_ops

        if hasattr(self, "_stddev"):
            return self._call(name, "stddev")
        if not hasattr(self, "_variance"):
            raise NotImplementedError(f"stddev is not implemented: {type(self).__name__}")
        with name_scope(f"{self._name}/{name}"):
            return math_ops.sqrt(self._variance())

    def covariance(self, name: str = "covariance") -> Tensor:
        return self._call(name, "covariance")

    def kl_divergence(self, other: Distribution, name: str = "kl_divergence") -> Tensor:
        """``KL(self || other)`` by the registered function for the two classes."""
        return kl_divergence(self, other, name=name)

    def cross_entropy(self, other: Distribution, name: str = "cross_entropy") -> Tensor:
        """``H(self, other) = H(self) + KL(self || other)``."""
        with name_scope(f"{self._name}/{name}"):
            return self._entropy() + kl_divergence(self, other)

    def __repr__(self) -> str:
        return f"<tf.distributions.{type(self).__name__} '{self._name}' batch_shape={self.batch_shape} " \
               f"event_shape={self.event_shape} dtype={self._dtype.name if self._dtype else None}>"


def _prod(shape: Tensor) -> Tensor:
    from flowmesh.ops.reduction_ops import reduce_prod

    return reduce_prod(shape)


_KL: dict[tuple[type, type], Callable[..., Tensor]] = {}


class RegisterKL:
    """Decorator registering ``fn(a, b, name=None)`` as ``KL(a || b)`` for instances of
    ``dist_cls_a`` and ``dist_cls_b`` (and their subclasses).

    Raises:
        ValueError: a function is already registered for the pair.
    """

    def __init__(self, dist_cls_a: type, dist_cls_b: type):
        self._key = (dist_cls_a, dist_cls_b)

    def __call__(self, kl_fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
        if not callable(kl_fn):
            raise TypeError(f"kl_fn must be callable, received: {kl_fn}")
        if self._key in _KL:
            raise ValueError(f"KL({self._key[0].__name__} || {self._key[1].__name__}) has already been "
                             f"registered to: {_KL[self._key]}")
        _KL[self._key] = kl_fn
        return kl_fn


def _registered(type_a: type, type_b: type) -> Callable[..., Tensor] | None:
    """The function of the closest registered pair up both classes' hierarchies."""
    best, best_distance = None, None
    for i, parent_a in enumerate(type_a.__mro__):
        for j, parent_b in enumerate(type_b.__mro__):
            fn = _KL.get((parent_a, parent_b))
            if fn is not None and (best_distance is None or i + j < best_distance):
                best, best_distance = fn, i + j
    return best


def kl_divergence(distribution_a: Distribution, distribution_b: Distribution, allow_nan_stats: bool = True,
                  name: str | None = None) -> Tensor:
    """``KL(distribution_a || distribution_b)``; with ``allow_nan_stats=False``, an
    assertion that it is not NaN.

    Raises:
        NotImplementedError: no function is registered for the two classes.
    """
    fn = _registered(type(distribution_a), type(distribution_b))
    if fn is None:
        raise NotImplementedError(f"No KL(distribution_a || distribution_b) registered for distribution_a type "
                                  f"{type(distribution_a).__name__} and distribution_b type "
                                  f"{type(distribution_b).__name__}")
    with name_scope(name, "KullbackLeibler"):
        kl = fn(distribution_a, distribution_b, name=name)
        if allow_nan_stats:
            return kl
        from flowmesh.ops import math_ops
        from flowmesh.ops.check_ops import assert_equal
        from flowmesh.ops.control_flow_ops import with_dependencies
        from flowmesh.ops.reduction_ops import reduce_any

        check = assert_equal(reduce_any(math_ops.is_nan(kl)), False,
                             message=f"KL calculation between {distribution_a.name} and {distribution_b.name} "
                                     "returned NaN values")
        return with_dependencies([check], kl)
