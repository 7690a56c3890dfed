"""benchmarks/image_ops.py still runs (tiny shapes; speed is measured elsewhere), and every
deterministic case computes what TensorFlow computes."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import harness, image_ops

TINY = ["--repeats", "1", "--steps", "1", "--warmup", "1", "--threads", "1", "--quiet"]
SHAPES = image_ops.Shapes(batch=2, side=12, up=17, down=5, height=24, width=32, crop=10,
                          canvas=28)


def test_every_case_runs_on_tiny_shapes() -> None:
    settings = harness.parse_settings("", image_ops.PEERS, TINY + ["--peers", ""])
    records = image_ops.run(settings, SHAPES)
    names = [r["bench"] for r in records]
    assert len(names) == len(image_ops.batch_cases(SHAPES)) + len(image_ops.single_cases(SHAPES))
    assert "image_ops/resize_bilinear_up" in names and all(r["flowmesh"] > 0 for r in records)


def test_runs_against_tensorflow_on_either_clock() -> None:
    pytest.importorskip("tensorflow")
    settings = harness.parse_settings("", image_ops.PEERS, TINY)
    records = image_ops.run(settings, SHAPES, only=["resize_bilinear_up", "decode_png"])
    assert [r["peer"] for r in records] == ["tensorflow", "tensorflow"]
    assert all(r["ratio"] > 0 for r in records)
    saved = harness.time_steps
    records = image_ops.run(settings, SHAPES, only=["central_crop"], clock="cpu")
    assert records[0]["unit"] == "steps/cpu-s" and records[0]["ratio"] > 0
    assert harness.time_steps is saved  # the wall clock is back for other benchmarks


@pytest.mark.parametrize("case", [c for c in image_ops.batch_cases(SHAPES)
                                  + image_ops.single_cases(SHAPES)
                                  if "random" not in c.name and "augment" not in c.name],
                         ids=lambda c: c.name)
def test_deterministic_cases_compute_what_tensorflow_computes(case) -> None:
    import flowmesh

    tf1 = harness.import_tensorflow()
    if tf1 is None:
        pytest.skip("tensorflow (the oracle) is not installed")
    ours, theirs = image_ops.evaluate(flowmesh, case), image_ops.evaluate(tf1, case)
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    if case.name == "decode_jpeg":  # TensorFlow's default INTEGER_FAST IDCT vs libjpeg's ISLOW
        diff = np.abs(ours.astype(int) - theirs)
        assert diff.max() <= 8 and diff.mean() < 2.0
    elif ours.dtype.kind == "f":
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(ours, theirs)
