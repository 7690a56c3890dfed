"""``tf.keras.preprocessing`` (sequence, text, image utilities) against tf-keras's own (pure
Python there too), ``ImageDataGenerator`` and the ``*_dataset_from_*`` functions."""

from __future__ import annotations

import random

import numpy as np
import pytest

import flowmesh as tf

K = tf.keras
TEXTS = ["The cat sat on the mat.", "The dog ate my homework!", "cat and dog, cat and mat", ""]


def _tf_keras():
    from flowmesh.testing.keras_oracle import require_tf_keras

    return require_tf_keras()[1]


@pytest.mark.oracle
def test_sequence_utilities_match_tf_keras():
    theirs = _tf_keras().preprocessing.sequence
    ours = K.preprocessing.sequence
    sequences = [[1, 2, 3], [4, 5], [], [6, 7, 8, 9, 10]]
    for kwargs in ({}, {"maxlen": 3}, {"maxlen": 4, "padding": "post", "truncating": "post", "value": -1},
                   {"dtype": "float32", "maxlen": 2, "truncating": "pre"}):
        np.testing.assert_array_equal(ours.pad_sequences(sequences, **kwargs), theirs.pad_sequences(sequences,
                                                                                                      **kwargs))
    np.testing.assert_allclose(ours.make_sampling_table(20), theirs.make_sampling_table(20))
    random.seed(3)
    expected = theirs.skipgrams([1, 2, 0, 3, 4, 5], 8, window_size=2, seed=7)
    random.seed(3)
    assert ours.skipgrams([1, 2, 0, 3, 4, 5], 8, window_size=2, seed=7) == expected
    data = np.arange(50).reshape(25, 2)
    for kwargs in ({"length": 3, "batch_size": 4}, {"length": 4, "sampling_rate": 2, "stride": 3, "reverse": True,
                                                    "start_index": 2, "end_index": 20, "batch_size": 2}):
        ours_gen = ours.TimeseriesGenerator(data, data[:, 0], **kwargs)
        theirs_gen = theirs.TimeseriesGenerator(data, data[:, 0], **kwargs)
        assert len(ours_gen) == len(theirs_gen)
        for i in range(len(ours_gen)):
            for a, b in zip(ours_gen[i], theirs_gen[i]):
                np.testing.assert_array_equal(a, b)


@pytest.mark.oracle
def test_text_utilities_match_tf_keras():
    theirs = _tf_keras().preprocessing.text
    ours = K.preprocessing.text
    assert ours.text_to_word_sequence(TEXTS[1]) == theirs.text_to_word_sequence(TEXTS[1])
    assert ours.hashing_trick(TEXTS[0], 10, "md5") == theirs.hashing_trick(TEXTS[0], 10, "md5")
    assert ours.one_hot(TEXTS[2], 7) == theirs.one_hot(TEXTS[2], 7)
    for kwargs in ({}, {"num_words": 4, "oov_token": "<unk>"}, {"char_level": True, "lower": False}):
        a, b = ours.Tokenizer(**kwargs), theirs.Tokenizer(**kwargs)
        a.fit_on_texts(TEXTS)
        b.fit_on_texts(TEXTS)
        assert a.word_index == b.word_index and dict(a.word_counts) == dict(b.word_counts)
        assert a.texts_to_sequences(TEXTS + ["unknown cat"]) == b.texts_to_sequences(TEXTS + ["unknown cat"])
        assert a.sequences_to_texts([[1, 2, 3, 9]]) == b.sequences_to_texts([[1, 2, 3, 9]])
        for mode in ("binary", "count", "freq", "tfidf"):
            np.testing.assert_allclose(a.texts_to_matrix(TEXTS, mode), b.texts_to_matrix(TEXTS, mode))
        back = theirs.tokenizer_from_json(a.to_json())
        assert back.word_index == a.word_index
        assert ours.tokenizer_from_json(b.to_json()).texts_to_sequences(TEXTS) == b.texts_to_sequences(TEXTS)


@pytest.mark.oracle
def test_image_files_match_tf_keras(tmp_path):
    theirs = _tf_keras().preprocessing.image
    ours = K.preprocessing.image
    pixels = np.random.default_rng(0).uniform(0, 255, (9, 12, 3)).astype(np.float32)
    ours.save_img(str(tmp_path / "a.png"), pixels, scale=False)
    for kwargs in ({}, {"color_mode": "grayscale"}, {"target_size": (5, 6), "interpolation": "bilinear"},
                   {"target_size": (6, 6), "keep_aspect_ratio": True}):
        np.testing.assert_array_equal(ours.img_to_array(ours.load_img(str(tmp_path / "a.png"), **kwargs)),
                                      theirs.img_to_array(theirs.load_img(str(tmp_path / "a.png"), **kwargs)))
    np.testing.assert_array_equal(np.asarray(ours.array_to_img(pixels)), np.asarray(theirs.array_to_img(pixels)))


def test_affine_transforms_follow_keras_conventions():
    image = np.arange(25, dtype=np.float32).reshape(5, 5, 1)
    rotate = K.preprocessing.image.apply_affine_transform
    turned = rotate(image, theta=90, row_axis=0, col_axis=1, channel_axis=2)
    assert any(np.allclose(turned[..., 0], np.rot90(image[..., 0], k)) for k in (1, -1))
    np.testing.assert_allclose(rotate(turned, theta=-90, row_axis=0, col_axis=1, channel_axis=2), image, atol=1e-4)
    shifted = rotate(image, tx=1, row_axis=0, col_axis=1, channel_axis=2, fill_mode="constant", cval=-1)
    np.testing.assert_allclose(shifted[:4, :, 0], image[1:, :, 0])  # output row r reads input row r + 1
    np.testing.assert_allclose(shifted[4, :, 0], -1)
    wrapped = rotate(image, ty=2, row_axis=0, col_axis=1, channel_axis=2, fill_mode="wrap")
    np.testing.assert_allclose(wrapped[..., 0], np.roll(image[..., 0], -2, axis=1))


def test_image_data_generator_feeds_fit(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 255, (24, 8, 8, 3)).astype(np.float32)
    y = (x[:, :, :, 0].mean(axis=(1, 2)) > 127).astype(np.float32)
    generator = K.preprocessing.image.ImageDataGenerator(rescale=1 / 255.0, rotation_range=10, horizontal_flip=True,
                                                         width_shift_range=0.1, featurewise_center=True,
                                                         validation_split=0.25)
    generator.fit(x / 255.0)
    flow = generator.flow(x, y, batch_size=6, seed=1, subset="training")
    batch_x, batch_y = flow[0]
    assert batch_x.shape == (6, 8, 8, 3) and batch_y.shape == (6,) and len(flow) == 3
    for label in (0, 1):
        (tmp_path / str(label)).mkdir()
        for i in range(3):
            K.preprocessing.image.save_img(str(tmp_path / str(label) / f"{i}.png"), x[i + 3 * label])
    directory = generator.flow_from_directory(str(tmp_path), target_size=(8, 8), batch_size=4, class_mode="binary")
    assert directory.class_indices == {"0": 0, "1": 1} and directory.samples == 6
    with tf.Graph().as_default():
        model = K.Sequential([K.layers.Flatten(input_shape=(8, 8, 3)), K.layers.Dense(1, activation="sigmoid")])
        model.compile("adam", "binary_crossentropy")
        model.fit(flow, epochs=2, verbose=0)
        model.fit(directory, epochs=1, verbose=0)


def test_datasets_from_directories_and_arrays(tmp_path):
    for label, name in enumerate(("cats", "dogs")):
        (tmp_path / "img" / name).mkdir(parents=True)
        (tmp_path / "txt" / name).mkdir(parents=True)
        for i in range(2):
            K.preprocessing.image.save_img(str(tmp_path / "img" / name / f"{i}.png"),
                                           np.full((4, 6, 3), 40.0 * (label + i)), scale=False)
            (tmp_path / "txt" / name / f"{i}.txt").write_text(f"{name} {i}")
    with tf.Graph().as_default():
        images = K.preprocessing.image_dataset_from_directory(str(tmp_path / "img"), image_size=(4, 6),
                                                              batch_size=4, shuffle=False, label_mode="categorical")
        texts = K.utils.text_dataset_from_directory(str(tmp_path / "txt"), batch_size=4, shuffle=False)
        series = K.preprocessing.timeseries_dataset_from_array(np.arange(10), np.arange(10) * 10, 3,
                                                               sequence_stride=2, batch_size=8)
        with tf.Session() as sess:
            x, y = sess.run(images.make_one_shot_iterator().get_next())
            words, labels = sess.run(texts.make_one_shot_iterator().get_next())
            windows, targets = sess.run(series.make_one_shot_iterator().get_next())
    assert images.class_names == ["cats", "dogs"] and x.shape == (4, 4, 6, 3)
    np.testing.assert_array_equal(y, [[1, 0], [1, 0], [0, 1], [0, 1]])
    assert list(words) == [b"cats 0", b"cats 1", b"dogs 0", b"dogs 1"] and list(labels) == [0, 0, 1, 1]
    np.testing.assert_array_equal(windows, [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]])
    np.testing.assert_array_equal(targets, [0, 20, 40, 60])
