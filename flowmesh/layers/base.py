"""``tf.layers.Layer``: a Keras layer named by variable scopes, as TensorFlow 1.x does.

Differences from :class:`flowmesh.keras.engine.base_layer.Layer` (those of TensorFlow's
``legacy_tf_layers/base.py``):

* the first call captures a ``variable_scope`` (``default_name`` = the snake-cased class,
  so ``dense``, ``dense_1``...; or the scope the functional form names), and weights are
  created with ``tf.get_variable`` inside it: ``dense/kernel``, reusable with
  ``reuse=True`` / ``tf.AUTO_REUSE`` and visible to custom getters and partitioners;
* later calls re-enter that scope with ``reuse=True`` and its original name scope
  (ops ``dense/MatMul_1``);
* regularization losses go to ``GraphKeys.REGULARIZATION_LOSSES`` and update ops
  (batch-norm moving averages) to ``GraphKeys.UPDATE_OPS``.
"""

from __future__ import annotations

from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.graph import GraphKeys, get_default_graph
from flowmesh.core.shapes import TensorShape
from flowmesh.keras import backend
from flowmesh.keras.engine import base_layer
from flowmesh.ops import variable_scope as vs


class Layer(base_layer.Layer):
    """Base class of ``tf.layers`` layers (variable-scope naming, ``get_variable`` weights)."""

    def __init__(self, trainable: bool = True, name: str | None = None, dtype: Any = None, **kwargs: Any):
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        self._scope: vs.VariableScope | None = None
        self._current_scope: vs.VariableScope | None = None
        self._always_reuse_scope: Any = None
        super().__init__(trainable=trainable, name=name, dtype=dtype, **kwargs)
        if scope is not None:
            with vs.variable_scope(scope) as captured:
                self._scope = captured

    def _init_set_name(self, name: Any) -> None:
        if isinstance(name, vs.VariableScope):
            self._base_name = name.name
            self._name = backend.unique_object_name(base_layer.to_snake_case(type(self).__name__),
                                                    zero_based=False)
        elif name:
            self._base_name = self._name = name
        else:
            self._base_name = base_layer.to_snake_case(type(self).__name__)
            self._name = backend.unique_object_name(self._base_name, zero_based=False)

    @property
    def scope_name(self) -> str:
        if self._scope is None:
            raise ValueError(
                f'No name available for layer scope because the layer "{self._name}" has not been '
                "used yet. The scope name is determined the first time the layer instance is "
                "called. You must therefore call the layer before querying `scope_name`."
            )
        return self._scope.name

    def _set_scope(self, scope: Any = None) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with vs.variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def _name_scope(self) -> str:
        assert self._current_scope is not None
        return self._current_scope.original_name_scope

    def _default_initializer(self, dtype: dtypes.DType) -> Any:
        return None  # the variable scope's initializer, else get_variable's default

    def _make_weight(self, name: str, shape: TensorShape, dtype: dtypes.DType, initializer: Any,
                     trainable: bool, constraint: Any, partitioner: Any) -> Any:
        self._set_scope(None)
        reuse = self.built or self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with get_default_graph().name_scope(self._name_scope()):
                if initializer is None:
                    initializer = scope.initializer
                return vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                       trainable=trainable, constraint=constraint,
                                       partitioner=partitioner)

    def _add_weight_regularization(self, name: str, variable: Any, regularizer: Any) -> None:
        graph = get_default_graph()
        if variable in getattr(self, "_regularized", ()):
            return
        with graph.colocate_with(variable.op), graph.name_scope(f"{name}/Regularizer"):
            loss = regularizer(variable)
        if loss is not None:
            self._losses.append(loss)
            graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
        self._regularized = getattr(self, "_regularized", []) + [variable]

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Adds losses to the layer and to ``GraphKeys.REGULARIZATION_LOSSES``."""
        before = len(self._losses)
        super().add_loss(losses, inputs)
        for loss in self._losses[before:]:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Calls the layer inside its variable scope (reused after the first call) and adds
        its update ops to ``GraphKeys.UPDATE_OPS``."""
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        if self.built:
            if self._always_reuse_scope is None:
                self._always_reuse_scope = self._scope
            manager = vs.variable_scope(self._always_reuse_scope, reuse=True, auxiliary_name_scope=False)
        else:
            manager = vs.variable_scope(self._scope, reuse=self._reuse, auxiliary_name_scope=False)
        with manager as current:
            self._current_scope = current
            outputs = super().__call__(inputs, *args, **kwargs)
        base_layer.collect_updates(self)
        return outputs

    apply = __call__


__all__ = ["Layer"]
