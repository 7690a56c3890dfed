"""``choose_from_datasets`` (TensorFlow's ``DirectedInterleaveDataset``): each element
comes from the input dataset a selector dataset names."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from flowmesh.errors import InvalidArgumentError
from flowmesh.kernels.pipeline.base import DatasetDef, Element
from flowmesh.kernels.pipeline.context import PipelineContext


class DirectedInterleaveDataset(DatasetDef):
    """The next element of ``inputs[i]`` for each ``i`` the selector yields (an int64
    scalar). An exhausted input ends the stage when ``stop_on_empty_dataset``, else it is
    skipped (and the stage ends once every input is exhausted)."""

    def __init__(self, name: str, selector: DatasetDef, inputs: Sequence[DatasetDef], stop_on_empty_dataset: bool):
        self.name = name
        self.selector = selector
        self.inputs = tuple(inputs)
        self.stop_on_empty_dataset = stop_on_empty_dataset

    def iterate(self, ctx: PipelineContext) -> Iterator[Element]:
        sources = [d.iterate(ctx) for d in self.inputs]
        live = [True] * len(sources)
        try:
            for (choice,) in self.selector.iterate(ctx):
                index = int(choice.item() if hasattr(choice, "item") else choice)
                if not 0 <= index < len(sources):
                    raise InvalidArgumentError(
                        f"DirectedInterleaveDataset '{self.name}': selector index {index} is out of range: "
                        f"there are {len(sources)} datasets")
                if not live[index]:
                    continue
                element = next(sources[index], None)
                if element is None:
                    live[index] = False
                    if self.stop_on_empty_dataset or not any(live):
                        return
                    continue
                yield element
        finally:
            for source in sources:
                source.close()
