"""``tf.data.Iterator`` (TF1): graph handles on a running pipeline.

* :func:`make_one_shot_iterator`: starts on its dataset the first time ``get_next`` runs.
* :func:`make_initializable_iterator`: ``initializer`` (re)starts it, reading the feeds of
  the placeholders the dataset uses at that moment (``sess.run(it.initializer,
  {x: data})``).
* :meth:`Iterator.from_structure` + :meth:`Iterator.make_initializer`: one iterator that
  can be started on any dataset of the same structure (train / validation switching).
* :meth:`Iterator.from_string_handle`: an iterator chosen per step by feeding the string
  handle of another iterator.

``get_next()`` raises ``OutOfRangeError`` at the end of the data (``MonitoredSession``
treats it as the end of training).
"""

from __future__ import annotations

import itertools
from typing import Any

from flowmesh.core import dtypes
from flowmesh.core.convert import convert_to_tensor
from flowmesh.core.graph import Operation, Tensor
from flowmesh.data import structure as st
from flowmesh.data.dataset import Dataset
from flowmesh.data.dataset_factory import dataset_factory
from flowmesh.ops._builders import make_op, make_tensor

_names = itertools.count()


def _spec_attrs(spec: Any) -> dict[str, Any]:
    return {"output_types": st.flat_types(spec), "output_shapes": st.flat_shapes(spec)}


class Iterator:
    """An iterator resource plus the element structure it produces.

    Args:
        iterator_resource: the handle tensor (``IteratorV2``, ``OneShotIterator`` or
            ``IteratorFromStringHandleV2``).
        initializer: the ``MakeIterator`` op, or ``None``.
        element_spec: nested ``TensorSpec`` of one element.
    """

    def __init__(self, iterator_resource: Tensor, initializer: Operation | None, element_spec: Any):
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._element_spec = element_spec

    # --- construction ------------------------------------------------------------------------
    @staticmethod
    def from_structure(output_types: Any, output_shapes: Any = None, shared_name: str | None = None,
                       output_classes: Any = None) -> Iterator:
        """An uninitialised iterator for elements of this structure; start it with
        ``make_initializer(dataset)``."""
        spec = st.specs_from(output_types, output_shapes, output_classes)
        attrs = {"shared_name": shared_name or f"iterator_{next(_names)}", "container": "",
                 **_spec_attrs(spec)}
        handle = make_tensor("IteratorV2", [], attrs, name="Iterator")
        return Iterator(handle, None, spec)

    @staticmethod
    def from_string_handle(string_handle: Any, output_types: Any, output_shapes: Any = None,
                           output_classes: Any = None) -> Iterator:
        """The iterator whose ``string_handle()`` value is fed to ``string_handle``."""
        spec = st.specs_from(output_types, output_shapes, output_classes)
        handle_tensor = convert_to_tensor(string_handle, dtype=dtypes.string)
        handle = make_tensor("IteratorFromStringHandleV2", [handle_tensor], _spec_attrs(spec),
                             name="IteratorFromStringHandle")
        return Iterator(handle, None, spec)

    # --- use ---------------------------------------------------------------------------------
    @property
    def initializer(self) -> Operation:
        """The op that (re)starts this iterator on its dataset.

        Raises:
            ValueError: the iterator has no dataset (one-shot or ``from_structure``).
        """
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer (one-shot iterators start "
                             "by themselves; from_structure iterators use make_initializer)")
        return self._initializer

    def make_initializer(self, dataset: Dataset, name: str | None = None) -> Operation:
        """An op that starts this iterator on ``dataset``.

        Raises:
            TypeError: the dataset's element structure or types differ from the iterator's.
        """
        spec = dataset.element_spec
        mine = self._element_spec
        if not st.same_structure(mine, spec) or st.flat_types(mine) != st.flat_types(spec):
            raise TypeError(f"Expected output types {st.types_of(mine)} (classes {st.classes_of(mine)}) "
                            f"but got dataset with output types {dataset.output_types} (classes "
                            f"{st.classes_of(spec)}); pass output_classes= for SparseTensor components.")
        for a, b in zip(st.flatten(mine), st.flatten(spec)):
            if not a.shape.is_compatible_with(b.shape):
                raise TypeError(f"Expected output shapes compatible with {st.shapes_of(mine)} but "
                                f"got dataset with output shapes {dataset.output_shapes}.")
        return make_op("MakeIterator", [dataset._variant_tensor, self._iterator_resource],
                       name=name or "MakeIterator")

    def get_next(self, name: str | None = None) -> Any:
        """The next element (nested like ``output_types``); run it once per step."""
        op = make_op("IteratorGetNext", [self._iterator_resource], _spec_attrs(self._element_spec),
                     name=name or "IteratorGetNext")
        return st.from_components(self._element_spec, list(op.outputs))

    def string_handle(self, name: str | None = None) -> Tensor:
        """A string tensor naming this iterator (for ``from_string_handle``)."""
        return make_tensor("IteratorToStringHandle", [self._iterator_resource],
                           name=name or "IteratorToStringHandle")

    # --- structure ---------------------------------------------------------------------------
    @property
    def element_spec(self) -> Any:
        return self._element_spec

    @property
    def output_types(self) -> Any:
        return st.types_of(self._element_spec)

    @property
    def output_shapes(self) -> Any:
        return st.shapes_of(self._element_spec)

    @property
    def output_classes(self) -> Any:
        return st.classes_of(self._element_spec)


def make_one_shot_iterator(dataset: Dataset) -> Iterator:
    """``tf.compat.v1.data.make_one_shot_iterator(dataset)``."""
    _check_dataset(dataset)
    attrs = {"shared_name": "", "container": "", **_spec_attrs(dataset.element_spec)}
    factory = dataset_factory(dataset._variant_tensor)
    if factory is None:  # reads placeholders or variables: built with the first step's values
        handle = make_tensor("OneShotIterator", [dataset._variant_tensor], attrs,
                             name="OneShotIterator")
    else:  # built once, when the iterator starts (not on every step)
        handle = make_tensor("OneShotIterator", [], {**attrs, "dataset_factory": factory},
                             name="OneShotIterator")
    return Iterator(handle, None, dataset.element_spec)


def make_initializable_iterator(dataset: Dataset, shared_name: str | None = None) -> Iterator:
    """``tf.compat.v1.data.make_initializable_iterator(dataset)``."""
    _check_dataset(dataset)
    iterator = Iterator.from_structure(dataset.output_types, dataset.output_shapes, shared_name)
    iterator._element_spec = dataset.element_spec
    iterator._initializer = iterator.make_initializer(dataset)
    return iterator


def get_output_types(iterator: Any) -> Any:
    return iterator.output_types


def get_output_shapes(iterator: Any) -> Any:
    return iterator.output_shapes


def get_output_classes(iterator: Any) -> Any:
    return iterator.output_classes


def _check_dataset(dataset: Any) -> None:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"Expected a tf.data.Dataset, got {type(dataset).__name__}")
