"""The tf.compat.v1 API coverage table, printed into the test run's output (CI's log)."""

from __future__ import annotations

import pytest

import flowmesh
from flowmesh.testing import api_coverage

# Raised as names land; a drop below one means a public name disappeared.
FLOOR = 0.98
FLOORS = {"keras": 0.93, "v1-all": 0.95}


def test_api_coverage_summary_is_printed(capsys):
    reference, source = api_coverage.reference_names()
    result = api_coverage.coverage(reference)
    table = api_coverage.summary(result, source, missing=True)
    with capsys.disabled():
        print("\n" + table)
    covered = sum(len(e.covered) for e in result)
    total = sum(len(e.reference) for e in result)
    assert total > 1000 and covered / total >= FLOOR, table


@pytest.mark.parametrize("kind", sorted(FLOORS))
def test_other_name_lists_are_printed(kind, capsys):
    """tf-keras's public names against flowmesh.keras, and every tf.compat.v1 namespace."""
    reference, source = api_coverage.reference_names(kind)
    result = api_coverage.coverage(reference, kind)
    prefix = "tf.keras." if kind == "keras" else "tf."
    table = api_coverage.summary(result, source, True, api_coverage.LISTS[kind].title, prefix)
    with capsys.disabled():
        print("\n" + table)
    covered, _, total = api_coverage.totals(result)
    assert total > 600 and covered / total >= FLOORS[kind], table


def test_unsupported_names_raise_naming_the_reason():
    from flowmesh.unsupported import TPU, unsupported

    stand_in = unsupported("tpu.rewrite", TPU)
    with pytest.raises(flowmesh.errors.UnimplementedError, match="TPUs are not a flowmesh device"):
        stand_in(lambda: None)
    with pytest.raises(flowmesh.errors.UnimplementedError, match=r"tf\.lite\.TFLiteConverter\.from_saved_model"):
        flowmesh.lite.TFLiteConverter.from_saved_model("/models/x")  # a class's constructor method, too
    reference = {ns: [] for ns in api_coverage.NAMESPACES}
    reference[""] = ["_never_", "Graph"]
    (top, *_rest) = api_coverage.coverage(reference)
    assert top.covered == ["Graph"] and top.missing == ["_never_"]


def test_snapshot_matches_the_namespaces():
    import json

    with open(api_coverage.SNAPSHOT) as f:
        snapshot = json.load(f)
    assert set(snapshot) == set(api_coverage.NAMESPACES)
    assert "import_graph_def" in snapshot[""] and "nce_loss" in snapshot["nn"]
    with open(api_coverage.LISTS["keras"].snapshot) as f:
        assert tuple(sorted(json.load(f))) == tuple(sorted(api_coverage.KERAS_NAMESPACES))
    with open(api_coverage.LISTS["v1-all"].snapshot) as f:
        every = json.load(f)
    assert "flags" in every and "image" in every and not any(ns.split(".")[0] in ("keras", "raw_ops", "compat") for ns in every)


def test_namespaces_come_from_the_export_table():
    """``v1``'s namespaces are a subset of the table's; ``v1-all`` lists the table's namespaces
    that its reference lacks (no reference names; ``keras`` aside) after the reference's own."""
    from flowmesh import api_builder

    assert set(api_coverage.NAMESPACES) <= set(api_builder.namespaces())
    result = api_coverage.coverage({"": ["Graph"]}, "v1-all")
    assert result[0].name == "" and result[0].covered == ["Graph"]
    assert {e.name for e in result[1:]} == {ns for ns in api_builder.namespaces()
                                            if ns and ns.split(".")[0] != "keras"}
    assert not any(e.reference for e in result[1:])
