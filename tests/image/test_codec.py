"""PNG/JPEG decoding and encoding against TensorFlow: bytes written by each decoded by the
other to the same pixels, channel conversions, 16-bit samples, corrupt input."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import flowmesh as tf
from flowmesh.errors import InvalidArgumentError
from flowmesh.testing.tf_oracle import require_tensorflow, session_config
from tests.image.helpers import run_flowmesh

_RNG = np.random.RandomState(0)


def _image(channels: int, dtype=np.uint8, h=13, w=17) -> np.ndarray:
    return _RNG.randint(0, np.iinfo(dtype).max + 1, (h, w, channels)).astype(dtype)


def _tf_run(build, *inputs):
    tf1 = require_tensorflow()
    with tf1.Graph().as_default():
        holders = [tf1.placeholder(tf1.string if x.dtype == object else tf1.as_dtype(x.dtype))
                   for x in inputs]
        outs = build(tf1, *holders)
        with tf1.Session(config=session_config(tf1)) as sess:
            return sess.run(outs, dict(zip(holders, inputs)))


def _bytes(data: bytes) -> np.ndarray:
    return np.array(data, dtype=object)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_png_round_trips_both_ways(channels, dtype):
    image = _image(channels, dtype)
    ours = run_flowmesh(lambda t, x: t.image.encode_png(x), image)[0]
    theirs = _tf_run(lambda t, x: t.image.encode_png(x), image)
    out_dtype = "uint16" if dtype == np.uint16 else "uint8"
    decoded_by_tf = _tf_run(lambda t, s: t.image.decode_png(s, dtype=getattr(t, out_dtype)), _bytes(ours))
    decoded_by_us = run_flowmesh(lambda t, s: t.image.decode_png(s, dtype=getattr(t, out_dtype)),
                                 _bytes(theirs))[0]
    np.testing.assert_array_equal(decoded_by_tf, image)
    np.testing.assert_array_equal(decoded_by_us, image)
    assert decoded_by_us.dtype == image.dtype


@pytest.mark.parametrize("have", [1, 2, 3, 4])
@pytest.mark.parametrize("want", [0, 1, 3, 4])
def test_png_channel_conversions_match_tensorflow(have, want):
    png = _bytes(_tf_run(lambda t, x: t.image.encode_png(x), _image(have)))
    build = lambda t, s: [t.image.decode_png(s, channels=want),  # noqa: E731
                          t.image.decode_png(s, channels=want, dtype=t.uint16)]
    ours, theirs = run_flowmesh(build, png), _tf_run(build, png)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)


def test_palette_and_sixteen_bit_pngs_from_pillow():
    out = io.BytesIO()
    Image.fromarray(_image(3)).convert("P").save(out, format="PNG")
    palette = _bytes(out.getvalue())
    build = lambda t, s: [t.image.decode_png(s), t.image.decode_png(s, channels=1),  # noqa: E731
                          t.image.decode_image(s)]
    for a, b in zip(run_flowmesh(build, palette), _tf_run(build, palette)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("channels", [0, 1, 3])
@pytest.mark.parametrize("dct", ["INTEGER_ACCURATE", ""])
def test_jpeg_decodes_like_tensorflow(channels, dct):
    image = np.clip(np.add.outer(np.arange(32), np.arange(40))[:, :, None] * [3, 2, 1], 0, 255)
    jpeg = _bytes(_tf_run(lambda t, x: t.image.encode_jpeg(x, quality=90),
                          image.astype(np.uint8)))
    build = lambda t, s: t.image.decode_jpeg(s, channels=channels, dct_method=dct)  # noqa: E731
    ours, theirs = run_flowmesh(build, jpeg)[0], _tf_run(build, jpeg)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    diff = np.abs(ours.astype(int) - theirs.astype(int))
    assert diff.max() <= (0 if dct == "INTEGER_ACCURATE" else 3), diff.max()


def test_jpeg_we_encode_tensorflow_decodes():
    image = np.clip(np.add.outer(np.arange(24), np.arange(30))[:, :, None] * [4, 3, 2], 0, 255)
    image = image.astype(np.uint8)
    jpeg = run_flowmesh(lambda t, x: t.image.encode_jpeg(x, quality=95), image)[0]
    decoded = _tf_run(lambda t, s: t.image.decode_jpeg(s), _bytes(jpeg))
    assert decoded.shape == image.shape
    assert np.abs(decoded.astype(int) - image).mean() < 2.0


def test_jpeg_ratio_and_decode_image():
    jpeg = _bytes(_tf_run(lambda t, x: t.image.encode_jpeg(x), _image(3, h=32, w=24)))
    build = lambda t, s: [t.image.decode_jpeg(s, ratio=2, dct_method="INTEGER_ACCURATE"),  # noqa: E731
                          t.image.decode_image(s, channels=3)]
    ours, theirs = run_flowmesh(build, jpeg), _tf_run(build, jpeg)
    assert ours[0].shape == theirs[0].shape == (16, 12, 3)
    assert np.abs(ours[0].astype(int) - theirs[0]).max() <= 1
    assert ours[1].shape == theirs[1].shape


def test_decode_image_gif_and_dtype():
    frames = [Image.fromarray(_image(3, h=8, w=6)).convert("P") for _ in range(3)]
    out = io.BytesIO()
    frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:])
    gif = _bytes(out.getvalue())
    png = _bytes(_tf_run(lambda t, x: t.image.encode_png(x), _image(4)))
    build = lambda t, g, p: [t.image.decode_image(g), t.image.decode_image(g, expand_animations=False),  # noqa: E731
                             t.image.decode_image(p, dtype=t.float32),
                             t.image.decode_image(p, channels=3, dtype=t.uint16)]
    ours, theirs = run_flowmesh(build, gif, png), _tf_run(build, gif, png)
    assert ours[0].shape == (3, 8, 6, 3)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_static_shapes():
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        assert tf.image.decode_png(s, channels=3).shape.as_list() == [None, None, 3]
        assert tf.image.decode_png(s, dtype=tf.uint16).dtype == tf.uint16
        assert tf.image.decode_jpeg(s).shape.as_list() == [None, None, None]
        assert tf.image.encode_png(tf.zeros([2, 2, 3], tf.uint8)).shape.as_list() == []


def test_corrupt_and_wrong_rank_input():
    png = run_flowmesh(lambda t, x: t.image.encode_png(x), _image(3))[0]
    with tf.Graph().as_default():
        s = tf.placeholder(tf.string, [])
        decoded = tf.image.decode_png(s)
        with tf.Session() as sess:
            with pytest.raises(InvalidArgumentError, match=r"DecodePng.*not a valid PNG"):
                sess.run(decoded, {s: png[: len(png) // 2]})
            with pytest.raises(InvalidArgumentError, match=r"DecodePng.*\(9 bytes\)"):
                sess.run(decoded, {s: b"not a png"})
        with pytest.raises(InvalidArgumentError, match="EncodePng.*3-dimensional"):
            tf.image.encode_png(tf.zeros([1, 2, 2, 3], tf.uint8))
        with pytest.raises(TypeError, match="EncodePng"):
            tf.image.encode_png(tf.zeros([2, 2, 3], tf.float32))
        with pytest.raises(InvalidArgumentError, match="DecodePng.*scalar.*\\(2,\\)"):
            tf.image.decode_png(tf.placeholder(tf.string, [2]))
