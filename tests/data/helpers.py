"""Running a dataset to its end in flowmesh and in TensorFlow (the oracle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import flowmesh as fm
from flowmesh.testing.tf_oracle import require_tensorflow, session_config


def drain(tf: Any, session: Any, next_element: Any, limit: int = 10_000) -> list[Any]:
    """Every element ``next_element`` yields until ``OutOfRangeError``."""
    out = []
    for _ in range(limit):
        try:
            out.append(session.run(next_element))
        except tf.errors.OutOfRangeError:
            return out
    raise AssertionError(f"dataset did not end within {limit} elements")


def run_flowmesh(build: Callable[[Any], Any]) -> list[Any]:
    """``build(fm)``'s elements, through a one-shot iterator in a flowmesh session."""
    with fm.Graph().as_default():
        dataset = build(fm)
        element = fm.data.make_one_shot_iterator(dataset).get_next()
        with fm.Session() as sess:
            return drain(fm, sess, element)


def run_tensorflow(build: Callable[[Any], Any]) -> list[Any]:
    """``build(tf1)``'s elements in TensorFlow (skips the test without it)."""
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        dataset = build(tf1)
        element = tf1.data.make_one_shot_iterator(dataset).get_next()
        with tf1.Session(config=session_config(tf1)) as sess:
            return drain(tf1, sess, element)


def flat(element: Any) -> list[Any]:
    """An element's leaves (dicts by sorted key)."""
    if isinstance(element, dict):
        return [x for k in sorted(element) for x in flat(element[k])]
    if isinstance(element, tuple):
        return [x for v in element for x in flat(v)]
    return [element]


def assert_same_elements(ours: list[Any], theirs: list[Any], ordered: bool = True) -> None:
    """Equal element lists (values, dtypes and shapes); ``ordered=False`` compares multisets."""
    assert len(ours) == len(theirs), f"{len(ours)} elements vs {len(theirs)}"
    a = [flat(e) for e in ours]
    b = [flat(e) for e in theirs]
    if not ordered:
        a, b = sorted(a, key=_key), sorted(b, key=_key)
    for i, (x, y) in enumerate(zip(a, b)):
        assert len(x) == len(y), f"element {i}: {len(x)} components vs {len(y)}"
        for j, (u, v) in enumerate(zip(x, y)):
            u, v = np.asarray(u), np.asarray(v)
            assert u.shape == v.shape, f"element {i} component {j}: shape {u.shape} vs {v.shape}"
            assert u.dtype == v.dtype, f"element {i} component {j}: dtype {u.dtype} vs {v.dtype}"
            if u.dtype.kind == "f":  # one float32 rounding apart (sqrt, sums)
                np.testing.assert_allclose(u, v, rtol=1e-6, err_msg=f"element {i} component {j}")
            else:
                np.testing.assert_array_equal(u, v, err_msg=f"element {i} component {j}")


def _key(components: list[Any]) -> Any:
    return [np.asarray(c).tobytes() for c in components]
