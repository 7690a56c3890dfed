"""tf.summary.image / audio / tensor_summary / text against TensorFlow (same tags, pixels,
WAV bytes and tensors), their event files read by TensorBoard's EventAccumulator, and the
SummaryDescription / TaggedRunMetadata messages."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

import flowmesh as tf
from flowmesh.protos.summary import Summary
from flowmesh.testing.tf_oracle import require_tensorflow, session_config

_RNG = np.random.RandomState(3)
_FLOAT_IMAGES = _RNG.uniform(-2, 3, (4, 5, 6, 3)).astype(np.float32)
_FLOAT_IMAGES[1, 2, 3, 1] = np.nan
_POSITIVE = _RNG.uniform(0, 1, (2, 3, 4, 1)).astype(np.float32)
_UINT8 = _RNG.randint(0, 256, (2, 4, 3, 4)).astype(np.uint8)
_CLIPS = np.concatenate([_RNG.uniform(-1.2, 1.2, (3, 50, 2)), np.full((1, 50, 2), 0.5 / 32768)]
                        ).astype(np.float32)

CASES = [
    ("image_float", lambda t: t.summary.image("img", t.constant(_FLOAT_IMAGES))),
    ("image_positive_one", lambda t: t.summary.image("pos", t.constant(_POSITIVE), max_outputs=1)),
    ("image_uint8_family", lambda t: t.summary.image("u8", t.constant(_UINT8), family="fam")),
    ("audio_stereo", lambda t: t.summary.audio("clip", t.constant(_CLIPS), 8000, max_outputs=4)),
    ("audio_mono", lambda t: t.summary.audio("mono", t.constant(_CLIPS[:, :, 0]), 16000.0)),
    ("tensor_float", lambda t: t.summary.tensor_summary("ts", t.constant([[1.5, 2.0]]),
                                                        summary_description="d", display_name="D")),
    ("tensor_int_scoped", lambda t: _scoped(t, lambda: t.summary.tensor_summary("ti", t.range(5)))),
    ("text", lambda t: t.summary.text("notes", t.constant([b"# hi", b"*there*"]))),
]


def _scoped(t, fn):
    with t.name_scope("outer"):
        return fn()


def _run(t, build, config=None):
    with t.Graph().as_default(), t.Session(config=config) as sess:
        return sess.run(build(t))


def _pixels(value) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(value.image.encoded_image_string)))


def _compare_value(ours, theirs) -> None:
    from flowmesh.core.graph_def import make_ndarray

    assert ours.tag == theirs.tag
    kind = theirs.WhichOneof("value")
    assert ours.WhichOneof("value") == kind
    if kind == "image":
        for field in ("height", "width", "colorspace"):
            assert getattr(ours.image, field) == getattr(theirs.image, field)
        np.testing.assert_array_equal(_pixels(ours), _pixels(theirs))
    elif kind == "audio":
        for field in ("sample_rate", "num_channels", "length_frames", "content_type",
                      "encoded_audio_string"):
            assert getattr(ours.audio, field) == getattr(theirs.audio, field), field
    else:
        np.testing.assert_array_equal(make_ndarray(ours.tensor), make_ndarray(theirs.tensor))
        assert ours.metadata == theirs.metadata


@pytest.mark.parametrize("name,build", CASES, ids=[c[0] for c in CASES])
def test_summary_matches_tensorflow(name, build):
    tf1 = require_tensorflow()
    ours = Summary.FromString(_run(tf, build))
    theirs = Summary.FromString(_run(tf1, build, session_config(tf1)))
    assert len(ours.value) == len(theirs.value) > 0
    for a, b in zip(ours.value, theirs.value):
        _compare_value(a, b)
    assert tf.get_default_graph() is not None


def test_tensorboard_reads_images_audio_and_text(tmp_path):
    require_tensorflow()
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with tf.Graph().as_default(), tf.Session() as sess:
        merged = tf.summary.merge([build(tf) for name, build in CASES
                                   if name in ("image_float", "audio_stereo", "text")])
        with tf.summary.FileWriter(str(tmp_path)) as writer:
            writer.add_summary(sess.run(merged), 7)
    acc = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "audio": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    assert sorted(tags["images"]) == [f"img/image/{i}" for i in range(3)]
    assert sorted(tags["audio"]) == [f"clip/audio/{i}" for i in range(4)]
    assert tags["tensors"] == ["notes"]
    image = acc.Images("img/image/2")[0]
    assert (image.step, image.width, image.height) == (7, 6, 5)
    clip = acc.Audio("clip/audio/0")[0]
    assert clip.sample_rate == 8000 and clip.length_frames == 50 and clip.content_type == "audio/wav"
    text = tf.make_ndarray(acc.Tensors("notes")[0].tensor_proto)
    assert text.tolist() == [b"# hi", b"*there*"]


def test_summary_description_and_tagged_run_metadata():
    tf1 = require_tensorflow()
    node = tf1.NodeDef(name="s", op="TensorSummary")
    node.attr["description"].s = b'{"typeHint": "scalar"}'
    ours = tf.summary.get_summary_description(node)
    assert ours.type_hint == tf1.summary.get_summary_description(node).type_hint == "scalar"
    assert tf.summary.SummaryDescription.FromString(ours.SerializeToString()) == ours
    assert ours.SerializeToString() == tf1.summary.SummaryDescription(type_hint="scalar").SerializeToString()
    with pytest.raises(ValueError, match="Can't get_summary_description on Const"):
        tf.summary.get_summary_description(tf1.NodeDef(name="c", op="Const"))
    tagged = tf.summary.TaggedRunMetadata(tag="step1", run_metadata=b"\x01\x02")
    assert tagged.SerializeToString() == tf1.summary.TaggedRunMetadata(
        tag="step1", run_metadata=b"\x01\x02").SerializeToString()
    event = tf.Event(step=3, tagged_run_metadata=tagged)
    assert tf.Event.FromString(event.SerializeToString()).tagged_run_metadata.tag == "step1"


def test_v2_helpers_and_bad_inputs():
    with tf.Graph().as_default():
        tf.summary.scalar("s", 1.0)
        assert tf.summary.all_v2_summary_ops() == []
        with pytest.raises(ValueError, match="dtype string"):
            tf.summary.text("t", tf.constant(1.0))
        with pytest.raises(ValueError, match="4-D"):
            tf.summary.image("i", tf.zeros([2, 3, 4]))
    with pytest.raises(tf.errors.UnimplementedError, match="FileWriter"):
        tf.summary.initialize()
