"""What compiling the extraction to C gives (issue 16 point 3: what would meet the ingest targets): the
Python of `store.reading.extract` (and the modules it calls per event: text, outcome, delivery, spans)
compiled with mypyc, the compiler mypy ships, beside the same code interpreted, on the event-heavy corpus.

    python -m bench.compiled_extraction [--runs 2000] [--repeats 5]

A copy of the repository's `store` package is compiled in a temporary folder (gcc and the Python headers are
needed: a bench, never the product's install). Each side runs in a child process of its own (the compiled
copy first on its path) and times the ingest's stages over every file with `bench.ingest_parts.stages`
(one core, the collector paused): the reference `orjson.loads`, `decode_recording`, `extract` and the row
tuples; each line is the median (min, max) of `--repeats` passes. The child checks first that both sides
give the same rows (a digest of every recording's tuples). `store.reading.decode` stays interpreted:
its msgspec Structs are read from their annotations, which a compiled class does not keep.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.__main__ import corpus_parser

ROOT = Path(__file__).resolve().parents[1]
#: the modules compiled: the extraction and what it calls for every event
COMPILED = [
    "store/reading/extract",
    "store/reading/text.py",
    "store/reading/outcome.py",
    "store/reading/delivery.py",
    "store/spans.py",
]

CHILD = r"""
import hashlib, json, pickle, sys
import store.reading.extract as extract_module
from bench.__main__ import corpus_by_runs
from bench.ingest_parts import stages
from store.db.ingest import to_tuples
from store.reading.decode import decode_recording
from store.reading.extract import extract

runs, repeats = int(sys.argv[1]), int(sys.argv[2])
paths = corpus_by_runs(runs)
digest = hashlib.sha256()
for path in paths:
    raw = path.read_bytes()
    rows = to_tuples(extract(decode_recording(raw, str(path)), sha256="-", origin=str(path), container="file", size=len(raw)))
    digest.update(pickle.dumps(rows, protocol=5))
samples = [stages(paths) for _ in range(repeats)]
times = {step: [s[step] for s in samples] for step in ("orjson.loads", "decode", "extract", "tuples")}
compiled = not extract_module.__file__.endswith(".py")
print(json.dumps({"compiled": compiled, "rows": digest.hexdigest(), "times": times}))
"""


def compiled_copy(folder: Path) -> Path:
    """A copy of the repository's packages in `folder` with the COMPILED modules built by mypyc in place."""
    copy = folder / "repo"
    for package in ("store", "bench"):
        shutil.copytree(
            ROOT / package, copy / package, ignore=shutil.ignore_patterns("corpus", "__pycache__")
        )
    (copy / "bench" / "corpus").symlink_to(ROOT / "bench" / "corpus", target_is_directory=True)
    subprocess.run(
        [sys.executable, "-m", "mypyc", *COMPILED], cwd=copy, check=True, capture_output=True, text=True
    )
    return copy


def measured(path: Path, runs: int, repeats: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(runs), str(repeats)],
        cwd=path,
        env={"PYTHONPATH": str(path), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    parser = corpus_parser(__doc__)
    parser.set_defaults(repeats=5)
    args = parser.parse_args(argv)
    from bench.__main__ import corpus_by_runs

    corpus_by_runs(args.runs)  # generated once, before either side is timed
    with tempfile.TemporaryDirectory(prefix="compiled-extraction-") as tmp:
        copy = compiled_copy(Path(tmp))
        interpreted, compiled = (
            measured(ROOT, args.runs, args.repeats),
            measured(copy, args.runs, args.repeats),
        )
    if interpreted["compiled"] or not compiled["compiled"]:
        raise SystemExit("the compiled copy was not the one imported")
    if interpreted["rows"] != compiled["rows"]:
        raise SystemExit("the compiled extraction gave other rows than the interpreted one")
    print(f"event-heavy corpus, {args.runs:,} runs; seconds, median (min, max) of {args.repeats}; same rows")
    for side, result in (("interpreted", interpreted), ("compiled (mypyc)", compiled)):
        times: dict[str, list[float]] = result["times"]  # type: ignore[assignment]
        parse = statistics.median(times["orjson.loads"])
        cells = []
        for step in ("decode", "extract", "tuples"):
            values = times[step]
            cells.append(f"{step} {statistics.median(values):.3f} ({min(values):.3f}, {max(values):.3f})")
        steps = sum(statistics.median(times[s]) for s in ("decode", "extract", "tuples"))
        print(
            f"  {side:17} {'; '.join(cells)}; the three {steps:.3f} s = {parse / steps:.2f}x orjson ({parse:.3f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
