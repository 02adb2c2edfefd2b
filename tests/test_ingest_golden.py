"""Ingest stores exactly the rows it stored before it was made faster: a full dump of every table for the
real recordings, the samples (broken ones and a zip included), the test helpers' recordings and a few
bench corpus files, against a golden written by the earlier code (`python -m tests.ingest_dump`): the ingest
before the typed decode and the one writer, with one run per content identity (run_sources, m014), so the
golden also holds which recordings each run was read from and its identity, with one worker or two. (Its
content ids were written again when the identity became a digest of per-event digests, so that a huge
event is never decoded twice at once; every other row, and which runs share an identity, were unchanged.
Then its timeline rows were cut to the events the timeline draws, extractor version 5: the rows kept, and
every other table, were unchanged.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ingest_dump import ingest_and_dump, load_golden


def _differences(got: dict[str, Any], want: dict[str, Any]) -> list[str]:
    out = []
    for key in sorted(set(got) | set(want)):
        if got.get(key) != want.get(key):
            g, w = got.get(key), want.get(key)
            if isinstance(g, list) and isinstance(w, list):
                extra = [x for x in g if x not in w][:3]
                missing = [x for x in w if x not in g][:3]
                out.append(f"{key}: {len(g)} rows vs {len(w)}; new {extra}; gone {missing}")
            else:
                out.append(f"{key}: {g!r} vs golden {w!r}")
    return out


@pytest.mark.parametrize("workers", [1, 2])
def test_ingest_stores_the_golden_rows(tmp_path: Path, workers: int) -> None:
    got = ingest_and_dump(tmp_path, workers=workers)
    assert _differences(got, load_golden()) == []
