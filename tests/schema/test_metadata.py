"""The contract's metadata document as a typed model (benchdb.schema.metadata): a valid document passes;
each kind of bad field is reported as its path and one reason (missing, the wrong type, past the
warehouse column's range, not finite, a timestamp without a UTC offset); unknown fields are kept."""

from __future__ import annotations

import copy

import pytest
from conftest import make_meta, make_run

from benchdb.schema import metadata

pytestmark = pytest.mark.core


def _with(section: str, field: str, value) -> dict:
    meta = copy.deepcopy(make_meta(make_run()))
    if value is ...:
        del meta[section][field]
    else:
        meta[section][field] = value
    return meta


def test_a_valid_document_passes_and_unknown_fields_are_kept():
    meta = make_meta(make_run())
    assert metadata.check(meta) is None
    meta["scenario"]["from_a_newer_runner"] = {"x": 1}
    assert metadata.check(meta) is None
    assert metadata.Metadata.model_validate(meta).scenario.model_extra["from_a_newer_runner"] == {"x": 1}


@pytest.mark.parametrize(
    ("section", "field", "value", "reason"),
    [
        ("run", "run_id", ..., "missing"),
        ("run", "run_id", None, "missing"),
        ("scenario", "threads", "4", "expected int, found str"),
        ("scenario", "batch_size", 0, "must be >= 1, found 0"),
        ("scenario", "batch_size", 2**31, "2147483648 is out of range: the warehouse column holds at most 2147483647"),
        ("scenario", "batch_size", 10**40, "a 41-digit integer is out of range: the warehouse column holds at most"),
        ("scenario", "load_avg_1m", float("inf"), "must be a finite number"),
        ("run", "started_at", "2026-11-01T10:00:00", "timestamp '2026-11-01T10:00:00' has no UTC offset"),
        ("run", "started_at", "yesterday", "'yesterday' is not an ISO-8601 timestamp"),
    ],
)
def test_a_bad_field_is_its_path_and_one_reason(section, field, value, reason):
    path, why = metadata.check(_with(section, field, value))
    assert path == f"metadata.{section}.{field}" and why.startswith(reason), why
