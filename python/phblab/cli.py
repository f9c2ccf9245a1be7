"""The `phblab` command: run and validate scenario files.

    phblab validate scenarios/examples/dumbbell-red.toml
    phblab run scenarios/examples/dumbbell-red.toml --set links[2].rate=5Mbps
    phblab --version

Exit status: 0 on success, 2 for a bad scenario, override or command line
(the message, naming the key and its position, goes to stderr), 1 if a run
fails in the simulator itself.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path

from phblab import _core, api
from phblab.results import Results
from phblab.summary import print_summary

EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2

_SET_HELP = (
    "change one value of the scenario before it is validated, e.g. "
    "--set links[2].rate=5Mbps or --set qdiscs.bottleneck.max_p=0.2; "
    "the path is written as in error messages; repeat for several values"
)

_EPILOG = """\
examples:
  phblab validate scenarios/examples/dumbbell-red.toml
  phblab run scenarios/examples/dumbbell-red.toml
  phblab run scenarios/examples/dumbbell-red.toml --seed 2 --out results/red-seed2
  phblab run scenarios/examples/dumbbell-red.toml --set qdiscs.bottleneck.max_p=0.2

A run writes summary.json and one Parquet file per table (classes, flows,
timeseries, transfers) into its output directory. docs/scenario-format.md
describes scenario files. Some shells (zsh) expand brackets: quote such
overrides, --set 'links[2].rate=5Mbps'.
"""


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=78)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="phblab",
        description=_wrap(
            "phblab: simulate router per-hop behaviours (schedulers, AQM, markers, "
            "policers) described by a TOML scenario file. Run 'phblab COMMAND --help' "
            "for a command's options."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"phblab {_core.version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    run = sub.add_parser(
        "run",
        help="run a scenario and write its results",
        description=_wrap(
            "Run the simulation a scenario file describes, print a per-class summary and "
            "write the results (summary.json and classes, flows, timeseries and transfers "
            ".parquet) to a directory, replacing a previous result there."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("file", metavar="FILE", help="the scenario file (TOML)")
    run.add_argument(
        "--out",
        metavar="DIR",
        help="directory for the results (default: results/<scenario name>)",
    )
    run.add_argument(
        "--seed",
        metavar="N",
        type=int,
        help="seed of the random streams (default: the scenario's run.seed); "
        "the same seed gives the same results",
    )
    run.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides", help=_SET_HELP)
    run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print no progress bar and no summary, only where the results went",
    )
    run.set_defaults(func=_run)

    validate = sub.add_parser(
        "validate",
        help="check a scenario file without running it",
        description=_wrap(
            "Check a scenario file (and any --set overrides) without running it: unknown "
            "keys, wrong units and impossible values are reported with the key and its "
            "position, and the exit status is 2."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    validate.add_argument("file", metavar="FILE", help="the scenario file (TOML)")
    validate.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides", help=_SET_HELP)
    validate.set_defaults(func=_validate)
    return parser


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise _BadInput(f"{path}: cannot read: {getattr(e, 'strerror', None) or e}") from None


class _BadInput(Exception):
    pass


def _run(args: argparse.Namespace) -> int:
    text = _read(args.file)
    bar = None if args.quiet else api.ProgressBar()
    start = time.perf_counter()
    try:
        raw = _core.run(text, args.file, args.seed, args.overrides, bar)
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - start
    results = Results.from_core(raw, wall_time_s=wall, overrides=args.overrides, version=_core.version())
    out = Path(args.out) if args.out else Path("results") / results.summary["scenario"]
    try:
        results.write(out)
    except OSError as e:
        raise _BadInput(f"cannot write results to {out}: {e}") from None
    if not args.quiet:
        print_summary(results)
        print()
    print(f"results written to {out}/")
    return 0


def _validate(args: argparse.Namespace) -> int:
    text = _read(args.file)
    d = _core.validate(text, args.file, args.overrides)
    classes = d["classes"]
    print(
        f"{args.file}: ok — {d['nodes']} nodes, {d['links']} links, {d['flows']} flows "
        f"in {len(classes)} class{'es' if len(classes) != 1 else ''} ({', '.join(classes)}), "
        f"duration {d['duration_s']:g} s (warm-up {d['warmup_s']:g} s), seed {d['seed']}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.func(args)
    except (_core.ScenarioError, _BadInput) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except _core.RunError as e:
        print(f"error: the simulation failed (a bug in phblab, please report it): {e}", file=sys.stderr)
        return EXIT_RUN_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
