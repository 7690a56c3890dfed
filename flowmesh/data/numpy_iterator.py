"""``tf.data.NumpyIterator``: a Python iterator over a dataset's elements as NumPy values
(what TensorFlow's ``as_numpy_iterator`` returns).

flowmesh builds graphs, so the iterator runs them itself: a one-shot iterator on the
dataset in the dataset's graph, driven by a private ``Session`` on that graph (closed when
the data ends or the iterator is closed). Scalars come back as NumPy scalars, strings as
``bytes``, structures as the dataset's (tuples, dicts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from flowmesh.data import structure as st
from flowmesh.errors import OutOfRangeError


class NumpyIterator:
    """Iterates ``dataset``'s elements as NumPy values.

    Raises:
        TypeError: ``dataset`` is not a ``tf.data.Dataset``, or holds nested datasets.
    """

    def __init__(self, dataset: Any):
        from flowmesh.data.dataset import Dataset
        from flowmesh.data.iterator import make_one_shot_iterator
        from flowmesh.runtime.session import Session

        if not isinstance(dataset, Dataset):
            raise TypeError(f"NumpyIterator takes a tf.data.Dataset, got {type(dataset).__name__}")
        if any(isinstance(s, st.DatasetSpec) for s in st.flatten(dataset.element_spec)):
            raise TypeError("NumpyIterator: elements holding nested datasets (window) have no NumPy value; "
                            "flat_map or batch them first")
        graph = dataset._variant_tensor.graph
        with graph.as_default():
            self._next = make_one_shot_iterator(dataset).get_next()
        self._session: Any = Session(graph=graph)

    def __iter__(self) -> NumpyIterator:
        return self

    def __next__(self) -> Any:
        if self._session is None:
            raise StopIteration
        try:
            value = self._session.run(self._next)
        except OutOfRangeError:
            self.close()
            raise StopIteration from None
        return st.map_structure(_numpy, value) if st.is_nested(value) else _numpy(value)

    def next(self) -> Any:
        """The next element (``StopIteration`` at the end)."""
        return self.__next__()

    def close(self) -> None:
        """Stops the pipeline and closes the private session."""
        if self._session is not None:
            self._session.close()
            self._session = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def _numpy(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value
