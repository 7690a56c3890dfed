"""The tf.compat.v1 API coverage table, printed into the test run's output (CI's log)."""

from __future__ import annotations

import flowmesh
from flowmesh.testing import api_coverage

# Raised as names land; a drop below it means a public name disappeared.
FLOOR = 0.98


def test_api_coverage_summary_is_printed(capsys):
    reference, source = api_coverage.reference_names()
    result = api_coverage.coverage(reference)
    table = api_coverage.summary(result, source, missing=True)
    with capsys.disabled():
        print("\n" + table)
    covered = sum(len(e.covered) for e in result)
    total = sum(len(e.reference) for e in result)
    assert total > 1000 and covered / total >= FLOOR, table


def test_unsupported_names_raise_naming_the_reason():
    import pytest

    from flowmesh.unsupported import TPU, unsupported

    stand_in = unsupported("tpu.rewrite", TPU)
    with pytest.raises(flowmesh.errors.UnimplementedError, match="TPUs are not a flowmesh device"):
        stand_in(lambda: None)
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
