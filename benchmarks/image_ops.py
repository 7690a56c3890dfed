"""``tf.image`` throughput: resizes (forward and gradient), crops, pads, flips, colour
adjustments, dtype conversion and decoding, flowmesh against TensorFlow.

    python -m benchmarks.image_ops [--threads 1] [--repeats 5] [--steps 20] [--cases a,b]

Each case is one small TF1 program built the same way in flowmesh and in TensorFlow 2.x
``compat.v1`` graph mode (default session config, grappler on) and timed with the shared
harness (alternating rounds, ratio of medians and of paired rounds). Image inputs live in
variables (initialised once from NumPy through a placeholder, so nothing is constant-folded and
no step pays a feed); each step runs the op as a target (``sess.run(out.op)``: the result is
computed but not copied to NumPy). Decoding cases feed the encoded bytes every step.

Shapes follow real input pipelines: a batch of 32 images 224x224x3 (float32 and uint8) resized
to 299x299 and to 112x112, the gradient of the resize with respect to its input, and single
480x640x3 images as in a per-example ``Dataset.map`` (decode, crop, flip, colour jitter,
standardisation). ``--cases`` takes a comma-separated list of substrings of case names.

``--clock cpu`` counts steps per CPU second of the process (all its threads) instead of per
wall second: on a machine whose cores other jobs share, a process gets 40-80% of a core at
random moments, which swamps wall-clock ratios of millisecond ops; with ``--threads 1`` the
CPU time is the work each system does per step.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.harness import (
    Contender,
    Settings,
    StepFn,
    import_tensorflow,
    measure,
    parse_settings,
    report,
    tf_config_proto,
)

PEERS = ("tensorflow",)


@dataclass(frozen=True)
class Shapes:
    """Image sizes of the benchmark (tests use tiny ones)."""

    batch: int = 32
    side: int = 224
    up: int = 299
    down: int = 112
    height: int = 480
    width: int = 640
    crop: int = 224
    canvas: int = 512


@dataclass(frozen=True)
class Case:
    """One benchmarked program: ``build(tf, inputs)`` returns the tensor to compute, where
    ``inputs`` maps each name of ``arrays`` to a variable holding it (or, for names in
    ``feeds``, a placeholder fed every step). The steps per round are ``--steps`` times
    ``scale`` (a round of a cheap op must still last long enough to be timed)."""

    name: str
    config: str
    arrays: dict[str, Any]
    build: Callable[[Any, dict[str, Any]], Any]
    scale: float = 8.0
    feeds: tuple[str, ...] = ()


def _grad(op: Callable[..., Any], size: list[int], weights: str) -> Callable[[Any, dict], Any]:
    def build(tf: Any, inp: dict[str, Any]) -> Any:
        out = op(tf)(inp["images"], size)
        return tf.gradients(out, inp["images"], grad_ys=inp[weights])[0]
    return build


def _images(rng: np.random.RandomState, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    return (rng.uniform(0, 255, shape).astype(dtype) if dtype == np.uint8
            else rng.uniform(0, 1, shape).astype(np.float32))


def _encoded(image: np.ndarray, fmt: str) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format=fmt, **({"quality": 90} if fmt == "JPEG" else {}))
    return buf.getvalue()


def _photo(rng: np.random.RandomState, h: int, w: int) -> np.ndarray:
    """A smooth synthetic photo (gradients + noise) that compresses like a real one."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.stack([xx / w, yy / h, (xx + yy) / (h + w)], -1) * 200
    return np.clip(base + rng.normal(0, 12, (h, w, 3)), 0, 255).astype(np.uint8)


def batch_cases(s: Shapes) -> list[Case]:
    """Resizes of a batch (forward and gradient), crops and flips of a batch."""
    rng = np.random.RandomState(0)
    shape = (s.batch, s.side, s.side, 3)
    f32, u8 = _images(rng, shape, np.float32), _images(rng, shape, np.uint8)
    gup = rng.randn(s.batch, s.up, s.up, 3).astype(np.float32)
    batch = f"{s.batch}x{s.side}x{s.side}x3"
    bil = (lambda tf: tf.image.resize_bilinear)
    bic = (lambda tf: tf.image.resize_bicubic)
    nn = (lambda tf: tf.image.resize_nearest_neighbor)
    up, down = [s.up, s.up], [s.down, s.down]
    return [
        Case("resize_bilinear_up", f"{batch} float32 -> {s.up}x{s.up}", {"images": f32},
             lambda tf, i: tf.image.resize_bilinear(i["images"], up), 1 / 8),
        Case("resize_bilinear_down", f"{batch} float32 -> {s.down}x{s.down}", {"images": f32},
             lambda tf, i: tf.image.resize_bilinear(i["images"], down), 1 / 4),
        Case("resize_bilinear_half_pixel", f"{batch} float32 -> {s.up}x{s.up} half_pixel_centers",
             {"images": f32}, lambda tf, i: tf.image.resize_bilinear(
                 i["images"], up, half_pixel_centers=True), 1 / 8),
        Case("resize_images_uint8", f"resize_images {batch} uint8 -> {s.up}x{s.up} bilinear",
             {"images": u8}, lambda tf, i: tf.image.resize_images(i["images"], up), 1 / 8),
        Case("resize_bilinear_grad", f"d/dimages of {batch} float32 -> {s.up}x{s.up}",
             {"images": f32, "g": gup}, _grad(bil, up, "g"), 1 / 8),
        Case("resize_bicubic_up", f"{batch} float32 -> {s.up}x{s.up}", {"images": f32},
             lambda tf, i: tf.image.resize_bicubic(i["images"], up), 1 / 16),
        Case("resize_bicubic_grad", f"d/dimages of {batch} float32 -> {s.up}x{s.up}",
             {"images": f32, "g": gup}, _grad(bic, up, "g"), 1 / 16),
        Case("resize_nearest_up", f"{batch} uint8 -> {s.up}x{s.up}", {"images": u8},
             lambda tf, i: tf.image.resize_nearest_neighbor(i["images"], up), 1 / 8),
        Case("resize_nearest_grad", f"d/dimages of {batch} float32 -> {s.up}x{s.up}",
             {"images": f32, "g": gup}, _grad(nn, up, "g"), 1 / 8),
        Case("resize_area_down", f"{batch} float32 -> {s.down}x{s.down}", {"images": f32},
             lambda tf, i: tf.image.resize_area(i["images"], down), 1 / 8),
        Case("central_crop_batch", f"{batch} float32, fraction 0.875", {"images": f32},
             lambda tf, i: tf.image.central_crop(i["images"], 0.875), 2),
        Case("random_flip_batch", f"random_flip_left_right {batch} float32", {"images": f32},
             lambda tf, i: tf.image.random_flip_left_right(i["images"], seed=1), 1 / 4),
    ]


def single_cases(s: Shapes) -> list[Case]:
    """What a per-example ``map`` does to one ``height x width x 3`` image."""
    rng = np.random.RandomState(1)
    photo = _photo(rng, s.height, s.width)
    f32 = photo.astype(np.float32) / 255.0
    one = f"{s.height}x{s.width}x3"
    crop, canvas = s.crop, s.canvas
    return [
        Case("decode_jpeg", f"{one} JPEG q90 -> uint8", {"jpeg": np.array(_encoded(photo, "JPEG"),
             dtype=object)}, lambda tf, i: tf.image.decode_jpeg(i["jpeg"], channels=3), 1,
             ("jpeg",)),
        Case("decode_png", f"{one} PNG -> uint8", {"png": np.array(_encoded(photo, "PNG"),
             dtype=object)}, lambda tf, i: tf.image.decode_png(i["png"], channels=3), 1 / 2, ("png",)),
        Case("resize_images_single", f"resize_images {one} uint8 -> {crop}x{crop} bilinear",
             {"image": photo}, lambda tf, i: tf.image.resize_images(i["image"], [crop, crop])),
        Case("resize_bilinear_single_f32", f"{one} float32 -> {crop}x{crop}", {"image": f32},
             lambda tf, i: tf.image.resize_bilinear(i["image"][None], [crop, crop])),
        Case("random_crop", f"{one} uint8 -> {crop}x{crop}x3", {"image": photo},
             lambda tf, i: tf.image.random_crop(i["image"], [crop, crop, 3], seed=1), 64),
        Case("crop_to_bounding_box", f"{one} uint8 -> {crop}x{crop} at (10, 20)", {"image": photo},
             lambda tf, i: tf.image.crop_to_bounding_box(i["image"], 10, 20, crop, crop), 64),
        Case("pad_to_bounding_box", f"{one} uint8 -> {s.height + 32}x{s.width + 32}",
             {"image": photo}, lambda tf, i: tf.image.pad_to_bounding_box(
                 i["image"], 16, 16, s.height + 32, s.width + 32), 64),
        Case("resize_image_with_crop_or_pad", f"{one} uint8 -> {canvas}x{canvas}",
             {"image": photo}, lambda tf, i: tf.image.resize_image_with_crop_or_pad(
                 i["image"], canvas, canvas), 64),
        Case("random_flip_left_right", f"{one} uint8", {"image": photo},
             lambda tf, i: tf.image.random_flip_left_right(i["image"], seed=1), 64),
        Case("random_brightness", f"{one} float32, max_delta 0.2", {"image": f32},
             lambda tf, i: tf.image.random_brightness(i["image"], 0.2, seed=1), 64),
        Case("random_contrast", f"{one} float32, [0.8, 1.2)", {"image": f32},
             lambda tf, i: tf.image.random_contrast(i["image"], 0.8, 1.2, seed=1)),
        Case("rgb_to_hsv", f"{one} float32", {"image": f32},
             lambda tf, i: tf.image.rgb_to_hsv(i["image"])),
        Case("random_hue", f"{one} float32, max_delta 0.1", {"image": f32},
             lambda tf, i: tf.image.random_hue(i["image"], 0.1, seed=1)),
        Case("random_saturation", f"{one} float32, [0.5, 1.5)", {"image": f32},
             lambda tf, i: tf.image.random_saturation(i["image"], 0.5, 1.5, seed=1)),
        Case("adjust_contrast_uint8", f"{one} uint8, factor 1.3", {"image": photo},
             lambda tf, i: tf.image.adjust_contrast(i["image"], 1.3)),
        Case("per_image_standardization", f"{one} uint8", {"image": photo},
             lambda tf, i: tf.image.per_image_standardization(i["image"])),
        Case("convert_image_dtype", f"{one} uint8 -> float32", {"image": photo},
             lambda tf, i: tf.image.convert_image_dtype(i["image"], tf.float32), 32),
        Case("augment_chain", f"{one} uint8: convert, random_crop {crop}, flip, brightness, "
             "contrast, clip", {"image": photo}, _augment(crop)),
    ]


def _augment(crop: int) -> Callable[[Any, dict], Any]:
    def build(tf: Any, inp: dict[str, Any]) -> Any:
        image = tf.image.convert_image_dtype(inp["image"], tf.float32)
        image = tf.image.random_crop(image, [crop, crop, 3], seed=1)
        image = tf.image.random_flip_left_right(image, seed=2)
        image = tf.image.random_brightness(image, 32.0 / 255.0, seed=3)
        image = tf.image.random_contrast(image, 0.5, 1.5, seed=4)
        return tf.clip_by_value(image, 0.0, 1.0)
    return build


def _program(tf: Any, case: Case) -> tuple[Any, Any, dict, dict]:
    """``case``'s graph in ``tf``: (graph, output tensor, variable inits, per-step feed)."""
    graph = tf.Graph()
    inits: dict[Any, np.ndarray] = {}
    feed: dict[Any, Any] = {}
    with graph.as_default():
        inputs: dict[str, Any] = {}
        for key, value in case.arrays.items():
            dtype = tf.string if value.dtype == object else tf.as_dtype(value.dtype)
            holder = tf.placeholder(dtype, value.shape, name=key)
            if key in case.feeds:
                inputs[key], feed[holder] = holder, value
                continue
            inputs[key] = tf.Variable(holder, trainable=False, name=key + "_var")
            inits[holder] = value
        output = case.build(tf, inputs)
        inits[None] = tf.global_variables_initializer()
    return graph, output, inits, feed


def _session(tf: Any, case: Case, threads: int) -> tuple[Any, Any, dict]:
    graph, output, inits, feed = _program(tf, case)
    sess = tf.Session(graph=graph, config=tf_config_proto(tf, threads))
    init = inits.pop(None)
    sess.run(init, inits)
    return sess, output, feed


def evaluate(tf: Any, case: Case) -> np.ndarray:
    """``case``'s output computed once by ``tf`` (flowmesh or TensorFlow)."""
    sess, output, feed = _session(tf, case, 1)
    with sess:
        return sess.run(output, feed)


def graph_contender(name: str, tf: Any, case: Case) -> Contender:
    """flowmesh or TensorFlow running ``case`` (inputs in variables, the op as the target)."""
    sessions: list[Any] = []

    def setup(settings: Settings) -> StepFn:
        sess, output, feed = _session(tf, case, settings.threads)
        sessions.append(sess)
        target = output.op
        return lambda: sess.run(target, feed)

    return Contender(name, setup, teardown=lambda: [s.close() for s in sessions])


def cpu_time_steps(step: StepFn, steps: int) -> float:
    """Runs ``step`` ``steps`` times; returns steps per CPU second of this process."""
    start = time.process_time()
    for _ in range(steps):
        step()
    return steps / max(time.process_time() - start, 1e-9)


@contextlib.contextmanager
def _clock(clock: str) -> Iterator[None]:
    """The harness times rounds with ``clock`` (``wall`` or ``cpu``) inside the block."""
    if clock == "wall":
        yield
        return
    saved = harness.time_steps
    harness.time_steps = cpu_time_steps
    try:
        yield
    finally:
        harness.time_steps = saved


def run(settings: Settings, shapes: Shapes = Shapes(), only: Sequence[str] = (),
        clock: str = "wall") -> list[dict]:
    """Measures every case (or those whose name contains one of ``only``) on ``clock``
    (``wall`` or ``cpu``); returns the JSON records."""
    import flowmesh

    tf1 = import_tensorflow() if "tensorflow" in settings.peers else None
    if "tensorflow" in settings.peers and tf1 is None:
        print("tensorflow is not installed: skipping the TensorFlow peer")
    records: list[dict] = []
    unit = "steps/s" if clock == "wall" else "steps/cpu-s"
    for case in batch_cases(shapes) + single_cases(shapes):
        if only and not any(o in case.name for o in only):
            continue
        contenders = [graph_contender("flowmesh", flowmesh, case)]
        if tf1 is not None:
            contenders.append(graph_contender("tensorflow", tf1, case))
        case_settings = replace(settings, steps=max(1, round(settings.steps * case.scale)),
                                warmup=max(1, round(settings.warmup * case.scale)))
        with _clock(clock):
            results = measure(contenders, case_settings)
        records += report(f"image_ops/{case.name}", case.config, results, case_settings, unit)
    return records


def main(argv: Sequence[str] | None = None) -> list[dict]:
    import argparse

    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--cases", default="", help="comma-separated substrings of case names")
    pre.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                     help="steps per wall second, or per CPU second of the process")
    known, rest = pre.parse_known_args(argv)
    settings = parse_settings(__doc__ or "", PEERS, rest, steps=16, repeats=5, warmup=4)
    return run(settings, only=[c for c in known.cases.split(",") if c], clock=known.clock)


if __name__ == "__main__":
    main()
