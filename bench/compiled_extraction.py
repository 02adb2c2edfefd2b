"""What compiling the extraction to C gives (issue 16 point 3: what would meet the ingest targets): the
Python of `store.reading.extract` (and the modules it calls per event: text, outcome, delivery, spans)
compiled with mypyc, the compiler mypy ships, beside the same code interpreted.

    python -m bench.compiled_extraction [--runs 2000 | --mb 50] [--repeats 5] [--ingest] [--rounds 2]

A copy of the repository's `store` package is compiled in a temporary folder (gcc and the Python headers are
needed: a bench, never the product's install). Each side runs in a child process of its own (the compiled
copy first on its path) and times the ingest's stages over every file with `bench.ingest_parts.stages`
(one core, the collector paused): the reference `orjson.loads`, `decode_recording`, `extract` and the row
tuples; each line is the median (min, max) of `--repeats` passes. The child checks first that both sides
give the same rows (a digest of every recording's tuples). `store.reading.decode` stays interpreted:
its msgspec Structs are read from their annotations, which a compiled class does not keep.

With `--ingest`, each child times the whole ingest instead (`store.db.ingest.ingest`, its workers on every
core, into a fresh database) beside the careful peer (`bench.scale.careful_peer`, its batch tuned once on
the files), `--repeats` of each, alternating, and the ratio is taken within each repetition; the two sides'
children take turns, `--rounds` times: a real prototype of the pipeline with a compiled extraction, not a
stand-in.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.__main__ import chosen_corpus, corpus_parser, measured_code, spread

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
from bench.ingest_parts import stages
from store.db.ingest import to_tuples
from store.reading.decode import decode_recording
from store.reading.extract import extract
from bench.__main__ import chosen_corpus, corpus_parser

parser = corpus_parser(None)
parser.add_argument("--batch", type=int, default=0)
args = parser.parse_args(sys.argv[1:])
paths, _ = chosen_corpus(args)
repeats = args.repeats
digest = hashlib.sha256()
for path in paths:
    raw = path.read_bytes()
    rows = to_tuples(extract(decode_recording(raw, str(path)), sha256="-", origin=str(path), container="file", size=len(raw)))
    digest.update(pickle.dumps(rows, protocol=5))
if args.batch:  # the whole ingest beside the careful peer
    from bench.ingest_prototypes import _timed_ingest
    from bench.scale import careful_peer
    times = {"peer": [], "ingest": []}
    for _ in range(repeats):
        times["peer"].append(careful_peer(paths, args.batch))
        times["ingest"].append(_timed_ingest(paths, None))
else:
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


def measured(path: Path, options: list[str]) -> dict[str, object]:
    """What the child (CHILD) printed, run in `path` with the corpus and timing `options`."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *options],
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
    parser.add_argument("--ingest", action="store_true", help="time the whole ingest beside the careful peer")
    parser.add_argument("--rounds", type=int, default=2, help="with --ingest: turns of each side's child")
    args = parser.parse_args(argv)
    paths, shape = chosen_corpus(args)  # generated once, before either side is timed
    options = [f"--runs={args.runs}", f"--repeats={args.repeats}"] + ([f"--mb={args.mb}"] if args.mb else [])
    if args.ingest:
        from bench.scale import tune_batch

        options.append(f"--batch={tune_batch(paths)}")
    with tempfile.TemporaryDirectory(prefix="compiled-extraction-") as tmp:
        copy = compiled_copy(Path(tmp))
        sides: dict[str, list[dict[str, object]]] = {"interpreted": [], "compiled (mypyc)": []}
        for _ in range(args.rounds if args.ingest else 1):
            sides["interpreted"].append(measured(ROOT, options))
            sides["compiled (mypyc)"].append(measured(copy, options))
    interpreted, compiled = sides["interpreted"], sides["compiled (mypyc)"]
    if any(r["compiled"] for r in interpreted) or not all(r["compiled"] for r in compiled):
        raise SystemExit("the compiled copy was not the one imported")
    if len({str(r["rows"]) for r in interpreted + compiled}) != 1:
        raise SystemExit("the compiled extraction gave other rows than the interpreted one")
    mb = sum(p.stat().st_size for p in paths) / 1e6
    passes = args.repeats * (args.rounds if args.ingest else 1)
    print(
        f"{len(paths):,} files, {mb:,.0f} MB ({shape}); median (min, max) of {passes}; same rows; {measured_code()}"
    )
    seconds, times_faster = (lambda v: f"{v:.3f} s"), (lambda v: f"{v:.3f}x")
    for side, results in sides.items():
        times: dict[str, list[float]] = {}
        for result in results:
            for step, values in result["times"].items():  # type: ignore[attr-defined]
                times.setdefault(step, []).extend(values)
        if args.ingest:
            ratios = [p / s for p, s in zip(times["peer"], times["ingest"], strict=True)]
            print(
                f"  {side:17} ingest {spread(times['ingest'], seconds)}; the careful peer "
                f"{spread(times['peer'], seconds)}; {spread(ratios, times_faster)} the careful peer"
            )
            continue
        parse = statistics.median(times["orjson.loads"])
        cells = [f"{step} {spread(times[step], seconds)}" for step in ("decode", "extract", "tuples")]
        steps = sum(statistics.median(times[s]) for s in ("decode", "extract", "tuples"))
        print(
            f"  {side:17} {'; '.join(cells)}; the three {steps:.3f} s = {parse / steps:.2f}x orjson ({parse:.3f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
