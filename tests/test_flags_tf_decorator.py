"""tf.flags.tf_decorator: make_decorator keeps the target inspectable, unwrap walks the chain,
rewrap swaps the target, as TensorFlow's tf_decorator (checked against it where installed)."""

from __future__ import annotations

import inspect

import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow

tf_decorator = tf.flags.tf_decorator


def scale(x, factor=2, *rest, key=None, **options):
    """Multiplies x."""
    return x * factor


def logging_decorator(target, calls):
    def wrapper(*args, **kwargs):
        calls.append(args)
        return wrapper.__wrapped__(*args, **kwargs)

    return tf_decorator.make_decorator(target, wrapper)


def test_make_decorator_copies_name_doc_signature_and_records_the_target():
    calls = []
    wrapped = logging_decorator(scale, calls)
    assert wrapped(3) == 6 and calls == [(3,)]
    assert wrapped.__name__ == "scale" and wrapped.__doc__ == "Multiplies x."
    assert inspect.signature(wrapped) == inspect.signature(scale)
    record = wrapped._tf_decorator
    assert record.decorator_name == "logging_decorator" and record.decorated_target is scale
    assert wrapped.__wrapped__ is scale and wrapped.__original_wrapped__ is scale


def test_unwrap_and_rewrap_walk_the_chain():
    outer = logging_decorator(logging_decorator(scale, []), [])
    decorators, target = tf_decorator.unwrap(outer)
    assert len(decorators) == 2 and target is scale
    assert tf_decorator.unwrap(scale) == ([], scale)

    def triple(x, factor=3, *rest, key=None, **options):
        return x * factor

    assert tf_decorator.rewrap(outer, scale, triple) is outer and outer(2) == 6
    assert tf_decorator.unwrap(outer)[1] is triple
    assert tf_decorator.rewrap(scale, scale, triple) is triple
    with pytest.raises(ValueError, match="previous_target"):
        tf_decorator.rewrap(scale, triple, triple)


def test_tfdecorator_subclass_and_argspec_override():
    class CallCounter(tf_decorator.TFDecorator):
        def __init__(self, target):
            super().__init__("count_calls", target)
            self.call_count = 0

        def __call__(self, *args, **kwargs):
            self.call_count += 1
            return super().decorated_target(*args, **kwargs)

    counted = CallCounter(scale)
    assert counted(2, 5) == 10 and counted.call_count == 1 and counted.__name__ == "scale"
    assert tf_decorator.unwrap(counted) == ([counted], scale)
    spec = inspect.FullArgSpec(["a", "b"], "args", "kw", (1,), ["c"], {"c": 0}, {})
    wrapped = tf_decorator.make_decorator(scale, lambda *a, **k: scale(*a, **k), decorator_argspec=spec)
    assert str(inspect.signature(wrapped)) == "(a, b=1, *args, c=0, **kw)"
    with pytest.raises(TypeError, match="FullArgSpec"):
        tf_decorator.fullargspec_to_signature(scale)


def test_against_tensorflow():
    tf1 = load_tensorflow()
    if tf1 is None:
        pytest.skip("TensorFlow is not installed")
    theirs = tf1.flags.tf_decorator
    assert {n for n in dir(theirs) if not n.startswith("_")} <= set(dir(tf_decorator))
    for spec in (inspect.getfullargspec(scale), inspect.getfullargspec(lambda a, *, b=2: a)):
        assert tf_decorator.fullargspec_to_signature(spec) == theirs.fullargspec_to_signature(spec)

    class Model:
        def call(self, inputs, training=False):
            return inputs

    bound = Model().call
    ours = tf_decorator.make_decorator(bound, lambda *a, **k: bound(*a, **k))
    reference = theirs.make_decorator(bound, lambda *a, **k: bound(*a, **k))
    assert inspect.signature(ours) == inspect.signature(reference)
    assert tf_decorator.Any is theirs.Any and tf_decorator.Dict is theirs.Dict
