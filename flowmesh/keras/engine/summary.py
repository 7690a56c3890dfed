"""``Model.summary()``: Keras's table of layers, output shapes and parameter counts."""

from __future__ import annotations

from typing import Any


def _shape_text(layer: Any) -> str:
    try:
        shape = layer.output_shape
    except AttributeError:
        return "multiple" if layer.built else "(unbuilt)"
    if isinstance(shape, list):
        return ", ".join(str(s) for s in shape)
    return str(shape)


def _count(weights: list[Any]) -> int:
    total = 0
    for w in weights:
        n = 1
        for d in w.shape.as_list():
            n *= int(d)
        total += n
    return total


def print_summary(model: Any, line_length: int | None = None, print_fn: Any = None) -> None:
    """Prints one row per layer: ``name (Type)``, output shape, number of parameters."""
    print_fn = print_fn or print
    width = line_length or 65
    cols = [int(width * 0.45), int(width * 0.85), width]

    def row(fields: list[str]) -> str:
        line = ""
        for text, stop in zip(fields, cols):
            line = (line + " " + text)[:stop - 1] if line else (" " + text)[:stop - 1]
            line = line.ljust(stop)
        return line.rstrip()

    print_fn(f'Model: "{model.name}"')
    print_fn("_" * width)
    print_fn(row(["Layer (type)", "Output Shape", "Param #"]))
    print_fn("=" * width)
    layers = model.layers
    for i, layer in enumerate(layers):
        print_fn(row([f"{layer.name} ({type(layer).__name__})", _shape_text(layer), str(layer.count_params())]))
        print_fn(("=" if i == len(layers) - 1 else " ") * width if i == len(layers) - 1 else "")
    if not layers:
        print_fn("=" * width)
    trainable = _count(model.trainable_weights)
    non_trainable = _count(model.non_trainable_weights)
    print_fn(f"Total params: {trainable + non_trainable:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {non_trainable:,}")
    print_fn("_" * width)
