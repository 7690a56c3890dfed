"""The small tf.compat.v1 namespaces of issue 26: aliases (tf.spectral, tf.manip,
tf.quantization, tf.io.gfile, tf.version, tf.nest), helpers (tf.resource_loader,
tf.autograph, tf.logging, tf.errors), tf.data.experimental's transformations, new ops
against TensorFlow (tf.math.special, tf.losses.mean_pairwise_squared_error), and the
names that raise (tf.lite, tf.tpu, tf.mlir)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import flowmesh as tf
from flowmesh.testing.tf_oracle import load_tensorflow


def test_aliases_are_the_top_level_ops():
    assert tf.spectral.rfft is tf.signal.rfft and tf.spectral.dct is tf.signal.dct
    assert tf.manip.roll is tf.roll and tf.manip.scatter_nd is tf.scatter_nd
    assert tf.quantization.fake_quant_with_min_max_args is tf.fake_quant_with_min_max_args
    assert tf.version.VERSION == tf.VERSION and tf.version.GRAPH_DEF_VERSION == tf.GRAPH_DEF_VERSION
    assert tf.lite.constants.FLOAT == tf.float32 and tf.lite.constants.TFLITE == 2


def test_nest():
    structure = {"b": (1, [2, 3]), "a": 4}
    assert tf.nest.flatten(structure) == [4, 1, 2, 3]
    assert tf.nest.pack_sequence_as(structure, [5, 6, 7, 8]) == {"a": 5, "b": (6, [7, 8])}
    assert tf.nest.map_structure(lambda x, y: x + y, structure, structure) == {"a": 8, "b": (2, [4, 6])}
    assert tf.nest.is_nested([1]) and not tf.nest.is_nested(1)
    with pytest.raises(TypeError):
        tf.nest.assert_same_structure((1, 2), [1, 2])
    tf.nest.assert_same_structure((1, 2), [1, 2], check_types=False)


def test_io_gfile_lower_case_names(tmp_path):
    gfile = tf.io.gfile
    root = gfile.join(str(tmp_path), "a")
    gfile.makedirs(gfile.join(root, "b"))
    with gfile.GFile(gfile.join(root, "f.txt"), "w") as f:
        f.write("hello")
    gfile.copy(gfile.join(root, "f.txt"), gfile.join(root, "g.txt"))
    with pytest.raises(tf.errors.AlreadyExistsError):
        gfile.rename(gfile.join(root, "f.txt"), gfile.join(root, "g.txt"))
    gfile.rename(gfile.join(root, "f.txt"), gfile.join(root, "h.txt"))
    assert sorted(gfile.listdir(root)) == ["b", "g.txt", "h.txt"]
    assert gfile.isdir(gfile.join(root, "b")) and gfile.exists(gfile.join(root, "g.txt"))
    assert gfile.stat(gfile.join(root, "g.txt")).length == 5
    assert sorted(os.path.basename(p) for p in gfile.glob(gfile.join(root, "*.txt"))) == ["g.txt", "h.txt"]
    gfile.remove(gfile.join(root, "g.txt"))
    gfile.rmtree(root)
    assert not gfile.exists(root)
    assert gfile.join("gs://bucket", "x", "y") == "gs://bucket/x/y" and "file" in gfile.get_registered_schemes()


def test_resource_loader_user_ops_and_autograph(capsys):
    here = os.path.dirname(os.path.abspath(__file__))
    assert tf.resource_loader.get_data_files_path() == here
    assert tf.resource_loader.get_path_to_datafile("x.txt") == os.path.join(here, "x.txt")
    assert tf.resource_loader.load_resource("flowmesh/__init__.py").startswith(b'"""')
    with tf.Graph().as_default(), tf.Session() as sess:
        assert sess.run(tf.user_ops.my_fact()) == b"0! == 1"

    @tf.autograph.experimental.do_not_convert
    def f(x):
        return x + 1

    assert f(1) == 2 and tf.autograph.experimental.do_not_convert()(f) is f
    tf.autograph.experimental.set_loop_options(maximum_iterations=3)
    tf.autograph.trace("traced", 3)
    assert "traced 3" in capsys.readouterr().out
    with pytest.raises(tf.errors.UnimplementedError, match="AutoGraph"):
        tf.autograph.to_graph(f)


def test_logging_and_error_status(caplog):
    tf.logging.log_if(tf.logging.ERROR, "shown %d", True, 1)
    tf.logging.log_if(tf.logging.ERROR, "hidden", False)
    tf.logging.flush()
    assert "shown 1" in caplog.text and "hidden" not in caplog.text
    with tf.errors.raise_exception_on_not_ok_status() as status:
        pass
    with pytest.raises(tf.errors.NotFoundError, match="gone"):
        with tf.errors.raise_exception_on_not_ok_status() as status:
            status.code, status.message = 5, "gone"


def _run(dataset, n):
    with tf.Graph().as_default(), tf.Session() as sess:
        nxt = dataset().make_one_shot_iterator().get_next()
        return [sess.run(nxt) for _ in range(n)]


def test_data_experimental_transformations():
    exp = tf.data.experimental
    assert tf.data.INFINITE_CARDINALITY == -1 and tf.data.UNKNOWN_CARDINALITY == -2
    batches = _run(lambda: tf.data.Dataset.range(5).apply(exp.map_and_batch(lambda x: x * 2, 2)), 3)
    assert [b.tolist() for b in batches] == [[0, 2], [4, 6], [8]]
    assert _run(lambda: exp.Counter(3, 2, tf.int32), 3) == [3, 5, 7]
    pairs = _run(lambda: tf.data.Dataset.range(3).apply(exp.enumerate_dataset(10)), 2)
    assert [tuple(map(int, p)) for p in pairs] == [(10, 0), (11, 1)]
    values = _run(lambda: tf.data.Dataset.range(4).apply(exp.shuffle_and_repeat(4, 2, seed=1)), 8)
    assert sorted(values) == [0, 0, 1, 1, 2, 2, 3, 3]
    rows = _run(lambda: tf.data.Dataset.from_tensors([[1, 2], [3, 4]]).apply(exp.unbatch()), 2)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    inter = _run(lambda: tf.data.Dataset.range(2).apply(exp.parallel_interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(2), cycle_length=2)), 4)
    assert inter == [0, 1, 0, 1]


def test_unsupported_namespaces_raise_with_the_reason():
    with pytest.raises(tf.errors.UnimplementedError, match="TensorFlow Lite"):
        tf.lite.TFLiteConverter.from_saved_model("x")
    with pytest.raises(tf.errors.UnimplementedError, match="TPU"):
        tf.tpu.experimental.embedding.TableConfig(10, 4)
    with pytest.raises(tf.errors.UnimplementedError, match="MLIR"):
        tf.mlir.experimental.convert_graph_def(None)


@pytest.mark.oracle
@pytest.mark.parametrize("name", ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "bessel_k0", "bessel_k0e",
                                  "bessel_k1", "bessel_k1e", "bessel_i1e"])
def test_math_special_equals_tensorflow(name):
    t = load_tensorflow()
    if t is None:
        pytest.skip("TensorFlow is needed as the oracle")
    x = np.array([0.3, 1.0, 2.5, 7.0, 20.0])
    with t.Graph().as_default(), t.Session() as sess:
        xt = t.constant(x)
        y = getattr(t.math.special, name)(xt)
        expected = sess.run([y, t.gradients(y, xt)[0]])
    with tf.Graph().as_default(), tf.Session() as sess:
        xt = tf.constant(x)
        y = getattr(tf.math.special, name)(xt)
        got = sess.run([y, tf.gradients(y, xt)[0]])
    # torch and TensorFlow evaluate J and Y by different approximations: 1e-8 apart
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5, atol=1e-7)


@pytest.mark.oracle
@pytest.mark.parametrize("weights", [1.0, np.array([1.0, 0.0, 2.0, 0.5], np.float32).reshape(4, 1, 1)])
def test_mean_pairwise_squared_error_equals_tensorflow(weights):
    t = load_tensorflow()
    if t is None:
        pytest.skip("TensorFlow is needed as the oracle")
    rng = np.random.default_rng(0)
    labels, predictions = rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    with t.Graph().as_default(), t.Session() as sess:
        expected = sess.run(t.losses.mean_pairwise_squared_error(labels, predictions, weights))
    with tf.Graph().as_default(), tf.Session() as sess:
        loss = tf.losses.mean_pairwise_squared_error(labels, predictions, weights)
        assert tf.losses.get_losses() == [loss]
        np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-6)


def _tables(t, vocab):
    lookup = t.lookup
    by_tensors = lookup.StaticHashTable(lookup.KeyValueTensorInitializer(["a", "b"], [3, 7], value_dtype=t.int64), -1)
    by_file = lookup.StaticHashTable(lookup.TextFileInitializer(
        vocab, t.string, lookup.TextFileIndex.WHOLE_LINE, t.int64, lookup.TextFileIndex.LINE_NUMBER), -5)
    words = lookup.StaticVocabularyTable(lookup.TextFileInitializer(vocab, t.string, -2, t.int64, -1), 4)
    numbers = lookup.StaticVocabularyTable(lookup.KeyValueTensorInitializer(
        t.constant([10, 20], t.int64), t.constant([0, 1], t.int64)), 3)
    return [by_tensors.lookup(t.constant([["a", "zz"], ["b", "a"]])), by_tensors.size(),
            by_file.lookup(t.constant(["cherry", "kiwi", "apple"])),
            words.lookup(t.constant(["banana", "kiwi", "mango", "x"])), words.size(),
            numbers.lookup(t.constant([20, 5, 10, 99], t.int64))]


@pytest.mark.oracle
def test_lookup_tables_equal_tensorflow(tmp_path):
    t = load_tensorflow()
    if t is None:
        pytest.skip("TensorFlow is needed as the oracle")
    vocab = str(tmp_path / "vocab.txt")
    with open(vocab, "w") as f:
        f.write("apple\nbanana\ncherry\n")
    with t.Graph().as_default(), t.Session() as sess:
        tables = _tables(t, vocab)
        sess.run(t.tables_initializer())
        expected = sess.run(tables)
    with tf.Graph().as_default(), tf.Session() as sess:
        tables = _tables(tf, vocab)
        sess.run(tf.tables_initializer())
        got = sess.run(tables)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="int64"):
        tf.lookup.TextFileInitializer(vocab, tf.string, -2, tf.string, -1)


def _loss_scaled_steps(t):
    x = t.Variable([1.0, 2.0], name="x")
    factor = t.placeholder(t.float32, [])
    scale = t.mixed_precision.DynamicLossScale(initial_loss_scale=8.0, increment_period=2)
    opt = t.mixed_precision.MixedPrecisionLossScaleOptimizer(t.train.GradientDescentOptimizer(0.1), scale)
    step = opt.minimize(t.reduce_sum(x * x) * factor)
    with t.Session() as sess:
        sess.run(t.global_variables_initializer())
        out = []
        for value in [1.0, np.inf, 1.0, 1.0, 1.0]:  # a non-finite step is skipped and halves the scale
            sess.run(step, {factor: value})
            out.append((sess.run(x).tolist(), float(sess.run(scale()))))
    return out, sorted(v.name for v in t.global_variables())


@pytest.mark.oracle
def test_dynamic_loss_scaling_equals_tensorflow():
    t = load_tensorflow()
    if t is None:
        pytest.skip("TensorFlow is needed as the oracle")
    with t.Graph().as_default():
        expected = _loss_scaled_steps(t)
    with tf.Graph().as_default():
        assert _loss_scaled_steps(tf) == expected
    assert tf.train.experimental.FixedLossScale is tf.mixed_precision.experimental.FixedLossScale
    with tf.Graph().as_default(), tf.Session() as sess:
        opt = tf.mixed_precision.enable_mixed_precision_graph_rewrite(tf.train.AdamOptimizer(), loss_scale=128)
        assert sess.run(opt._loss_scale()) == 128.0
    with pytest.raises(ValueError, match="at least 1"):
        tf.mixed_precision.FixedLossScale(0.5)


@pytest.mark.oracle
@pytest.mark.parametrize("fn", ["quantize_and_dequantize", "quantize_and_dequantize_v2"])
@pytest.mark.parametrize("kwargs", [{}, {"range_given": True}, {"signed_input": False, "num_bits": 4},
                                    {"narrow_range": True, "range_given": True}, {"round_mode": "HALF_UP"},
                                    {"num_bits": 3}])
def test_quantize_and_dequantize_equals_tensorflow(fn, kwargs):
    t = load_tensorflow()
    if t is None:
        pytest.skip("TensorFlow is needed as the oracle")
    x = np.array([[-1.3, 0.2, 0.77, 2.5], [0.05, -0.4, 3.1, -2.2]], np.float32)
    weights = np.arange(8, dtype=np.float32).reshape(2, 4)
    results = []
    for lib in (t, tf):
        with lib.Graph().as_default(), lib.Session() as sess:
            xt = lib.constant(x)
            y = getattr(lib.quantization, fn)(xt, -1.0, 2.0, **kwargs)
            results.append(sess.run([y, lib.gradients(y * weights, xt)[0]]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
