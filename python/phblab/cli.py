"""The `phblab` command: run and validate scenario files, sweep them, plot,
reproduce the catalog's papers and write the report.

    phblab validate scenarios/examples/dumbbell-red.toml
    phblab run scenarios/examples/dumbbell-red.toml --set links[2].rate=5Mbps
    phblab sweep scenarios/examples/dumbbell-red.toml --grid qdiscs.bottleneck.max_p=0.05,0.1,0.2 --seeds 3
    phblab plot results/dumbbell-red-sweep --x qdiscs.bottleneck.max_p --y delay_mean_s
    phblab reproduce --list
    phblab report
    phblab --version

Exit status: 0 on success, 2 for a bad scenario, override or command line
(the message, naming the key and its position, goes to stderr), 1 if a run
fails in the simulator itself, 3 if a reproduction does not match its
expected values.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from phblab import _core
from phblab.results import TABLES

if TYPE_CHECKING:
    from phblab.results import Results

EXIT_RUN_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REPRODUCTION_FAILED = 3
EXIT_INTERRUPTED = 130
#: the reader of our output went away (`phblab reproduce --list | head`):
#: the status a shell reports for a command killed by SIGPIPE
EXIT_BROKEN_PIPE = 141

_SET_HELP = (
    "change one value of the scenario before it is validated, e.g. "
    "--set links[2].rate=5Mbps or --set qdiscs.bottleneck.max_p=0.2; "
    "the path is written as in error messages; repeat for several values; "
    "--set '~traffic[1].granularity' removes a key, so its default applies"
)


def _wrap(text: str) -> str:
    return textwrap.fill(text, width=78)


#: the result files of a run, as help texts list them
_RESULT_FILES = f"summary.json, scenario.toml and {', '.join(f'{t}.parquet' for t in TABLES)}"

_EPILOG = f"""\
examples:
  phblab validate scenarios/examples/dumbbell-red.toml
  phblab run scenarios/examples/dumbbell-red.toml
  phblab run scenarios/examples/dumbbell-red.toml --seed 2 --out results/red-seed2
  phblab run scenarios/examples/dumbbell-red.toml --set qdiscs.bottleneck.max_p=0.2

{
    _wrap(
        f"A run writes {_RESULT_FILES} into its output directory (docs/results.md), "
        "and events.parquet, its packet trace, when the scenario has a [trace] section "
        "(with trace.pcap = true, trace.pcapng too). "
        "docs/scenario-format.md describes scenario files. Some shells (zsh) expand brackets: "
        "quote such overrides, --set 'links[2].rate=5Mbps'."
    )
}
"""


def _seed(text: str) -> int:
    """argparse type of a seed: an integer in 0..=2^64-1."""
    from phblab import api

    try:
        return api.check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is an integer from 0 to {api.SEED_MAX}") from None


def _positive(text: str) -> int:
    """argparse type of a count (seeds, jobs): an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return value


def _microseconds(text: str) -> int:
    """argparse type of a short time in whole microseconds (0 to 1 s)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of microseconds from 0 to 1000000")
    return value


def _seed_list(text: str) -> list[int]:
    """argparse type of --seed-list: comma-separated seeds, each once."""
    seeds = [_seed(part.strip()) for part in text.split(",")]
    if len(set(seeds)) != len(seeds):
        raise argparse.ArgumentTypeError(f"{text!r}: a seed is listed twice")
    return seeds


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
            f"write the results ({_RESULT_FILES}) to a directory, replacing a previous result there."
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
        type=_seed,
        help="seed of the random streams (default: the scenario's run.seed); the same seed gives the same results",
    )
    run.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides", help=_SET_HELP)
    run.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print no progress bar and no summary, only where the results went",
    )
    run.set_defaults(func=_run)

    emu = sub.add_parser(
        "emulate",
        help="run a scenario on real Linux TCP through phblab's qdiscs (needs root)",
        description=_wrap(
            "Run a scenario's hosts in network namespaces with the kernel's TCP and UDP, "
            "and its routers and links in the user-space router phb-emu, which runs the same "
            f"qdiscs as the simulator in real time; write {_RESULT_FILES} as `run` does. "
            "Needs CAP_NET_ADMIN and CAP_SYS_ADMIN (root) and "
            "/dev/net/tun; nothing it creates outlives it. docs/emulation.md has the details."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    emu.add_argument("file", metavar="FILE", nargs="?", help="the scenario file (TOML)")
    emu.add_argument(
        "--out", metavar="DIR", help="directory for the results (default: results/<scenario name>-emulate)"
    )
    emu.add_argument("--seed", metavar="N", type=_seed, help="seed of the UDP sources and start jitters")
    emu.add_argument("--duration", metavar="T", help='run for this long instead of run.duration (e.g. "5s")')
    emu.add_argument(
        "--congestion",
        metavar="CC",
        default="reno",
        choices=("reno", "cubic", "bbr"),
        help="the TCP senders' congestion control: reno (default), cubic or bbr",
    )
    emu.add_argument(
        "--spin-us",
        metavar="US",
        type=_microseconds,
        default=0,
        help="the router polls instead of sleeping in the last US microseconds before each timer: "
        "less timing error for a core's time (default 0; docs/emulation.md)",
    )
    emu.add_argument("--set", metavar="KEY=VALUE", action="append", default=[], dest="overrides", help=_SET_HELP)
    emu.add_argument(
        "--shell",
        metavar="HOST",
        help="open a shell ($SHELL, else /bin/sh) in HOST's network namespace while the emulation runs; "
        "leaving it does not end the run, and whatever it started is killed at the end",
    )
    emu.add_argument(
        "--cleanup",
        action="store_true",
        help="stop the processes (and so the namespaces) and remove the temporary directories of "
        "emulations whose phblab process was killed, then exit",
    )
    emu.add_argument("--quiet", "-q", action="store_true", help="print only where the results went")
    emu.set_defaults(func=_emulate)

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
    validate.add_argument(
        "--backend",
        choices=("simulate", "emulate"),
        default="simulate",
        help="check what this backend can run: phblab's simulator (default) or `phblab emulate`",
    )
    validate.set_defaults(func=_validate)
    _add_workflow(sub)
    return parser


_SWEEP_EPILOG = """\
examples:
  phblab sweep scenarios/examples/dumbbell-red.toml --grid qdiscs.bottleneck.max_p=0.05,0.1,0.2 --seeds 3
  phblab sweep small.toml --grid 'links[1].rate=5Mbps,10Mbps' --grid traffic[0].count=5,10 --jobs 2
  phblab sweep small.toml --grid qdiscs.bottleneck.max_p=0.1,0.2 --dask tcp://scheduler:8786
  phblab sweep small.toml --grid qdiscs.bottleneck.max_p=0.1,0.2 --dask local
  phblab sweep small.toml --grid 'links[1].rate=5Mbps,10Mbps' --backend emulate --congestion cubic

The sweep directory holds runs/<key>/ (one results directory per run, kept
for resumption), classes.parquet and flows.parquet (every run's rows with
the swept keys, seed and run key as columns), runs.parquet, summary.parquet
and group_summary.parquet (mean and 95% CI across seeds) and sweep.json.
Rerunning the same command skips complete runs. docs/workflow.md has more.
--backend emulate runs every point on real Linux TCP through phb-emu (root;
one point at a time, in real time) into results/<name>-emulate-sweep;
docs/emulation.md, "Sweeps and reproductions".
"""

_PLOT_EPILOG = """\
examples:
  phblab plot results/dumbbell-red-sweep --x qdiscs.bottleneck.max_p --y delay_mean_s --by class
  phblab plot results/dumbbell-red-sweep --y throughput_bps --scope 'r1->r2' --out red-throughput
  phblab plot results/dumbbell-red-sweep --y goodput_bps --table groups --by group
  phblab plot results/dumbbell-red                       # one run: time series and delay CDF
  phblab plot results/traced --flow tcp.0                # a traced TCP flow's time-sequence graph

Every plot is written as PNG and SVG (--out without suffix).
"""

_REPRODUCE_EPILOG = """\
examples:
  phblab reproduce --list
  phblab reproduce vukadinovic-2004/appendix-b
  phblab reproduce --all --jobs 2
  phblab reproduce regression/fifo-vs-red --seeds 2       # fewer seeds than the entry asks
  phblab reproduce ENTRY --backend emulate     # if the entry's [reproduce].backends allows it

Results go to results/reproduce/<id>/ (the sweep, comparison.json and .csv,
plots), emulated ones to results/reproduce/<id>-emulate/; complete runs there
are reused. Exit status 3 if a value is out of tolerance or a claim does not
hold. docs/workflow.md describes catalog entries, docs/emulation.md emulation.
"""


_CATALOG_HELP = (
    "the catalog root (default: $PHBLAB_CATALOG if set, else ./scenarios if it exists, else the scenarios/ of "
    "the phblab checkout this command runs from, which it names)"
)


def _catalog_note(args: argparse.Namespace) -> None:
    """Says which catalog a command without --catalog reads when it is not
    ./scenarios: the one beside phblab's own checkout."""
    from phblab import catalog

    if args.catalog is None and not os.environ.get("PHBLAB_CATALOG") and not Path("scenarios").is_dir():
        print(f"note: no ./scenarios here: the catalog is {catalog.default_catalog()}", file=sys.stderr)


def _add_backend(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--backend",
        choices=("simulate", "emulate"),
        default="simulate",
        help=f"{what}: phblab's simulator (default) or emulate: real Linux TCP through phb-emu "
        "(needs root; one run at a time, in real time; docs/emulation.md)",
    )
    parser.add_argument(
        "--congestion",
        metavar="CC",
        choices=("reno", "cubic", "bbr"),
        help="with --backend emulate: the TCP senders' congestion control, reno (default), cubic or bbr",
    )


def _add_workflow(sub) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    sw = sub.add_parser(
        "sweep",
        help="run a scenario over a grid of values and seeds",
        description=_wrap(
            "Run a scenario for every combination of the --grid values, each with several "
            "seeds, in parallel, and combine the results into one dataset with statistics "
            "across seeds. Complete runs in the output directory are reused, so an "
            "interrupted sweep resumes where it stopped."
        ),
        epilog=_SWEEP_EPILOG,
        formatter_class=fmt,
    )
    sw.add_argument("file", metavar="FILE", help="the scenario file (TOML)")
    sw.add_argument(
        "--grid",
        metavar="KEY=V1,V2,...",
        action="append",
        default=[],
        help="a swept scenario path and its values, e.g. qdiscs.bottleneck.max_p=0.05,0.1; "
        "values are read as for --set; repeat for a cartesian product",
    )
    sw.add_argument("--seeds", metavar="N", type=_positive, default=1, help="seeds 1..N per grid point (default 1)")
    sw.add_argument("--seed-list", metavar="S1,S2", type=_seed_list, help="explicit seeds instead of --seeds")
    sw.add_argument("--jobs", "-j", metavar="J", type=_positive, help="local worker processes (default: one per core)")
    sw.add_argument("--out", metavar="DIR", help="sweep directory (default: results/<scenario name>-sweep)")
    sw.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on a Dask distributed scheduler at ADDRESS (tcp://host:8786), or 'local' for a local Dask cluster",
    )
    sw.add_argument(
        "--set",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        dest="overrides",
        help="a fixed override for every run",
    )
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary")
    _add_backend(sw, "where the runs execute")
    sw.set_defaults(func=_sweep)

    pl = sub.add_parser(
        "plot",
        help="plot a sweep (metric vs swept key) or a run (time series, delay CDF, a traced flow)",
        description=_wrap(
            "Plot a sweep directory: a metric against a swept key, one line per class (or "
            "group, scope) and per value of the other swept keys, with the mean across seeds "
            "and its 95% confidence band. Or plot one run's results directory: its time "
            "series (queue length, per-class delay and throughput) and its delay CDF; or, with "
            "--flow, one traced TCP flow's time-sequence graph from its packet trace."
        ),
        epilog=_PLOT_EPILOG,
        formatter_class=fmt,
    )
    pl.add_argument("results", metavar="RESULTS", help="a sweep directory or a run's results directory")
    pl.add_argument("--x", help="a sweep: the swept key on the x axis (default: the first)")
    pl.add_argument("--y", help="a sweep: the metric column (default delay_mean_s)")
    pl.add_argument(
        "--by",
        help="a sweep: one line per value of class (default) or scope; with --table groups, per group (more than "
        "12 groups: summed per generator), generator, class or transport (flows summed over each); or 'none'",
    )
    pl.add_argument(
        "--scope",
        help="end-to-end (default) or a link direction such as 'r1->r2': a sweep's classes scope; a run's delay "
        "CDF and time series there (the link's queue, backlog, queueing delay, throughput and offered load)",
    )
    pl.add_argument(
        "--table",
        choices=["classes", "groups"],
        help="a sweep: classes (per scope and class) or groups (flow totals per traffic group)",
    )
    pl.add_argument("--logx", action="store_true", help="a sweep: logarithmic x axis")
    pl.add_argument("--logy", action="store_true", help="a sweep: logarithmic y axis")
    pl.add_argument("--timeseries", action="store_true", help="a run: the time series only")
    pl.add_argument("--cdf", action="store_true", help="a run: the delay CDF only")
    pl.add_argument(
        "--flow",
        metavar="NAME",
        help="a run: the time-sequence graph of TCP flow NAME (as the flows table names it) from the run's "
        "packet trace: segments, retransmissions, drops by reason and ACKs (--scope: at that traced link "
        "direction; default the first the flow crosses)",
    )
    pl.add_argument(
        "--out",
        metavar="FILE",
        help="output path without suffix (PNG and SVG are written); for a run drawn in both "
        "ways, a prefix: FILE-timeseries, FILE-delay-cdf",
    )
    pl.set_defaults(func=_plot)

    rp = sub.add_parser(
        "reproduce",
        help="run catalog entries and compare with the papers' values",
        description=_wrap(
            "Run reproductions from the catalog (scenario files with a [reproduce] section "
            "under scenarios/), compare our values with the paper's (or recorded regression "
            "values), print pass or fail with the gap, and plot ours beside theirs."
        ),
        epilog=_REPRODUCE_EPILOG,
        formatter_class=fmt,
    )
    rp.add_argument("ids", metavar="ID", nargs="*", help="entry ids (paper/id, or id alone when unique)")
    rp.add_argument("--list", action="store_true", help="list the catalog's entries")
    rp.add_argument("--all", action="store_true", help="run every entry")
    rp.add_argument("--catalog", metavar="DIR", help=_CATALOG_HELP)
    rp.add_argument("--results", metavar="DIR", default=None, help="where results go (default results/reproduce)")
    rp.add_argument("--jobs", "-j", metavar="J", type=_positive, help="local worker processes (default: one per core)")
    rp.add_argument("--seeds", metavar="N", type=_positive, help="seeds 1..N instead of the entry's")
    rp.add_argument("--dask", metavar="ADDRESS", help="as for sweep")
    rp.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    _add_backend(rp, "where the entries' runs execute (emulate: only entries whose [reproduce].backends allow it)")
    rp.set_defaults(func=_reproduce)

    rep = sub.add_parser(
        "report",
        help="write the reproduction report (HTML, or the catalog's outcome in Markdown)",
        description=_wrap(
            "Write a static HTML page with every catalog entry's plots, our values beside the "
            "expected ones, pass or fail, assumptions and run parameters, from the results "
            "`phblab reproduce` left (or after running them, with --run). The page and every "
            "file it links are in the output directory; open index.html in a browser. "
            "With --format markdown, write the catalog's outcome as one Markdown document instead "
            "(each entry's checks with the paper's value, ours, CI, verdict, kind and cause, stamped "
            "with the phblab version, commit and date of its run), as docs/catalog-outcome.md is."
        ),
        formatter_class=fmt,
    )
    rep.add_argument(
        "ids", nargs="*", metavar="ENTRY", help="entries to include (ids as for reproduce; default: every entry)"
    )
    rep.add_argument(
        "--format",
        choices=["html", "markdown"],
        default="html",
        help="html: a page with plots in --out DIR; markdown: the catalog's outcome as one document "
        "(to stdout, or to --out FILE), as docs/catalog-outcome.md is",
    )
    rep.add_argument(
        "--out",
        metavar="PATH",
        help="html: output directory (default results/report); markdown: a file (default stdout)",
    )
    rep.add_argument("--results", metavar="DIR", help="reproduce results to read (default results/reproduce)")
    rep.add_argument("--catalog", metavar="DIR", help=_CATALOG_HELP)
    rep.add_argument("--run", action="store_true", help="run `reproduce` on every entry first")
    rep.add_argument("--jobs", "-j", metavar="J", type=_positive, help="with --run: local worker processes")
    _add_backend(rep, "with --run: where the entries' runs execute (emulate: the entries that allow it)")
    rep.set_defaults(func=_report)


def _read(path: str) -> str:
    from phblab import api
    from phblab.entry import scenario_text_of_file

    try:
        text = api.read_scenario_file(path)
    except OSError as e:
        raise _BadInput(f"{path}: cannot read: {e.strerror or e}") from None
    except ValueError as e:
        raise _BadInput(str(e)) from None
    try:
        return scenario_text_of_file(text)  # a catalog entry's [reproduce] is not for the core
    except ValueError as e:
        raise _BadInput(f"{path}: {e}") from None


class _BadInput(Exception):
    pass


def _run(args: argparse.Namespace) -> int:
    from phblab import api

    text = _read(args.file)
    sets = api.override_list(args.overrides)
    out = _out_dir(args.out, lambda: Path("results") / _core.validate(text, args.file, sets)["name"], "run")
    bar = None if args.quiet else api.ProgressBar()
    try:
        results = api.simulate(text, args.file, args.seed, sets, bar)
    finally:
        if bar is not None:
            bar.close()
    _print_warnings(results.summary["warnings"])
    _write_results(results, out, args.quiet)
    return 0


def _out_dir(given: str | None, default: Callable[[], Path], kind: str) -> Path:
    """The output directory (`--out`, else `default()`), checked before
    anything runs: new, empty, or phblab's directory of `kind`
    (`outdir.claim`; NotOurs otherwise)."""
    from phblab import outdir

    out = Path(given) if given is not None else default()
    outdir.claim(out, kind)
    return out


def _write_results(results: Results, out: Path, quiet: bool) -> None:
    """Writes a run's results into `out` and says where (after the summary,
    unless `quiet`)."""
    from phblab.summary import print_summary

    try:
        results.write(out)
    except OSError as e:
        raise _BadInput(f"cannot write results to {out}: {e}") from None
    if not quiet:
        print_summary(results)
        print()
    print(f"results written to {out}/")


def _emulate(args: argparse.Namespace) -> int:
    from phblab import emulate

    if args.cleanup:
        done = emulate.cleanup()
        print("\n".join(done) if done else "nothing to clean up")
        return 0
    if args.file is None:
        raise _BadInput("emulate: give a scenario FILE (or --cleanup)")
    text = _read(args.file)
    sets = emulate.settings(args.overrides, args.duration)
    name = _core.validate(text, args.file, sets, "emulate")["name"]
    out = _out_dir(args.out, lambda: Path("results") / f"{name}-emulate", "emulated-run")
    try:
        results = emulate.emulate(
            text,
            args.file,
            seed=args.seed,
            duration=args.duration,
            congestion=args.congestion,
            overrides=args.overrides,
            spin_us=args.spin_us,
            shell=args.shell,
        )
    except emulate.EmulateError as e:
        if e.bad_input:
            raise _BadInput(str(e)) from None
        raise
    _write_results(results, out, args.quiet)
    return 0


def _validate(args: argparse.Namespace) -> int:
    text = _read(args.file)
    d = _core.validate(text, args.file, args.overrides, args.backend, advise=True)
    classes = d["classes"]
    print(
        f"{args.file}: ok — {d['nodes']} nodes, {d['links']} links, {d['flows']} flows "
        f"in {len(classes)} class{'es' if len(classes) != 1 else ''} ({', '.join(classes)}), "
        f"duration {d['duration_s']:g} s (warm-up {d['warmup_s']:g} s), seed {d['seed']}"
    )
    _print_warnings(d["warnings"])
    return 0


def _print_warnings(warnings: list[str]) -> None:
    """The scenario's warnings (`phb_sim::advice`), one `warning:` line each, on stderr."""
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


class _DaskClient:
    """`--dask ADDRESS`: a distributed.Client, closed (with its local cluster) on exit."""

    def __init__(self, address: str | None) -> None:
        self.address = address
        self.client = None

    def __enter__(self):
        if not self.address:
            return None
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise _BadInput("--dask needs the 'distributed' package: pip install 'dask[distributed]'") from None
        if self.address == "local":
            self.client = Client(LocalCluster(dashboard_address=None))
        else:
            try:
                self.client = Client(self.address, timeout=30)
            except OSError as e:
                raise _BadInput(f"--dask {self.address}: cannot connect: {e}") from None
        return self.client

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            cluster = self.client.cluster if self.address == "local" else None
            self.client.close()
            if cluster is not None:
                cluster.close()


def _check_backend(args: argparse.Namespace) -> None:
    """Refuses, before anything starts, options the backend cannot honour:
    --congestion without --backend emulate; --jobs above 1 or --dask with it."""
    if args.backend != "emulate":
        if args.congestion is not None:
            raise _BadInput("--congestion applies only to --backend emulate (the simulator's TCP is the scenario's)")
        return
    if getattr(args, "dask", None):
        raise _BadInput("--backend emulate runs one point at a time in this process: drop --dask")
    if (args.jobs or 1) > 1:
        raise _BadInput(f"--backend emulate runs one point at a time in this process: drop --jobs {args.jobs}")


def _sweep(args: argparse.Namespace) -> int:
    from phblab import stats
    from phblab.sweep import SweepError, is_path, kept_runs, parse_grid_arg, sweep

    try:
        pairs = [parse_grid_arg(g) for g in args.grid]
    except ValueError as e:
        raise _BadInput(str(e)) from None
    grid = dict(pairs)
    if len(grid) != len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in (p[0] for p in pairs[:i]))
        raise _BadInput(f"--grid {twice} is given twice: give all its values once, {twice}=V1,V2,...")
    seeds = args.seed_list or args.seeds
    bad = [k for k in grid if not is_path(k)]
    if bad:
        raise _BadInput(f"--grid {bad[0]}: not a scenario path (e.g. run.duration, links[1].delay)")
    _read(args.file)  # a readable file, or a clear message
    _check_backend(args)
    start = time.perf_counter()
    with _DaskClient(args.dask) as client:
        try:
            sw = sweep(
                args.file,
                grid=grid,
                seeds=seeds,
                jobs=args.jobs,
                out=args.out,
                client=client,
                overrides=args.overrides,
                progress=not args.quiet,
                backend=args.backend,
                congestion=args.congestion,
            )
        except SweepError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_RUN_FAILED
        except ValueError as e:
            if isinstance(e, _core.ScenarioError):
                raise
            raise _BadInput(str(e)) from None
    _print_warnings(sw.warnings)
    for rerun in sw.reruns:
        print(f"note: {rerun}", file=sys.stderr)
    others = kept_runs(sw.dir, sw.runs.run)
    if others:
        print(
            f"note: {sw.dir}/runs/ also keeps {others} run{'s' if others != 1 else ''} of other grid values or "
            "seeds, left out of this dataset (a sweep that asks for them again reuses them)",
            file=sys.stderr,
        )
    if not args.quiet:
        print(_sweep_headline(sw, time.perf_counter() - start))
        print()
        print("end-to-end:")
        print(stats.format_summary(sw.summary(scope="end-to-end"), by=[*sw.keys, "class"]))
        print()
    print(f"sweep written to {sw.dir}/")
    return 0


def _sweep_headline(sw, wall: float) -> str:
    """`name: N runs: ...`: how many ran now (and how fast), how many were
    reused, and the command's time."""
    how = f" emulated (TCP congestion control {sw.congestion})" if sw.backend == "emulate" else ""
    total, ran = len(sw.runs), sw.ran
    rate = f", {ran / wall:.1f} runs/s" if ran and sw.backend == "simulate" else ""
    if ran == total:
        done = f"all run now, in {wall:.1f} s{rate}"
    elif ran == 0:
        done = f"all reused, summarised in {wall:.1f} s"
    else:
        done = f"{ran} run now, {total - ran} reused, in {wall:.1f} s{rate}"
    return f"{sw.name}: {total} run{'s' if total != 1 else ''}{how}: {done}"


_SWEEP_ONLY = ("x", "y", "by", "table", "logx", "logy")
_RUN_ONLY = ("timeseries", "cdf", "flow")


def _refuse(args: argparse.Namespace, options: Sequence[str], what: str) -> None:
    given = [o for o in options if getattr(args, o) not in (None, False)]
    if given:
        raise _BadInput(f"--{given[0]} does not apply to {what}")


def _plot(args: argparse.Namespace) -> int:
    from phblab import plot
    from phblab.results import load
    from phblab.sweep import SweepError

    path = Path(args.results)
    written = []
    scope = args.scope or plot.END_TO_END
    try:
        if (path / "sweep.json").is_file():
            _refuse(args, _RUN_ONLY, "a sweep (it draws a metric against a swept key)")
            by = None if (args.by or "class").lower() == "none" else (args.by or "class")
            written += plot.plot_metric(
                path,
                x=args.x,
                y=args.y or "delay_mean_s",
                by=by,
                scope=scope,
                table=args.table,
                out=args.out,
                logx=args.logx,
                logy=args.logy,
            )
        elif (path / "summary.json").is_file():
            _refuse(args, _SWEEP_ONLY, "a run's results (they draw time series and a delay CDF)")
            load(path)  # a clear message if its files no longer match their manifest
            if args.flow is not None:
                _refuse(args, ("timeseries", "cdf"), "--flow (it draws the flow's time-sequence graph)")
                written += plot.plot_time_sequence(path, args.flow, scope=args.scope, out=args.out)
            else:
                written += _plot_run(plot, path, args, scope)
        else:
            raise _BadInput(f"{path}: neither a sweep directory (sweep.json) nor a run's results (summary.json)")
    except (ValueError, FileNotFoundError, SweepError) as e:
        raise _BadInput(str(e)) from None
    for p in written:
        print(f"wrote {p}")
    return 0


def _plot_run(plot, path: Path, args: argparse.Namespace, scope: str) -> list:
    """A run's time series and delay CDF (or the one --timeseries or --cdf asks for)."""
    written = []
    both = not (args.timeseries or args.cdf)
    prefix = (lambda name: f"{args.out}-{name}") if args.out and both else (lambda name: args.out)
    if args.timeseries or both:
        try:
            written += plot.plot_timeseries(path, out=prefix("timeseries"), scope=scope)
        except ValueError as e:
            if not both:
                raise
            print(f"note: {e}", file=sys.stderr)
    if args.cdf or both:
        written += plot.plot_delay_cdf(path, scope=scope, out=prefix("delay-cdf"))
    return written


def _for_backend(entries: list, backend: str, every: bool) -> list:
    """The entries to run on `backend`: all of `entries` if each allows
    it; with `every` (--all), those that do (saying which are left out);
    otherwise a one-line error naming the first that does not."""
    from phblab import catalog

    allowed = [e for e in entries if backend in e.backends]
    if len(allowed) == len(entries):
        return entries
    if not every:
        catalog.check_backend(next(e for e in entries if backend not in e.backends), backend)
    left = [e.id for e in entries if backend not in e.backends]
    print(
        f"note: {len(left)} entr{'ies' if len(left) != 1 else 'y'} without {backend!r} in [reproduce].backends "
        f"left out ({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})",
        file=sys.stderr,
    )
    if not allowed:
        raise _BadInput(f"no catalog entry allows the {backend} backend ([reproduce].backends)")
    return allowed


def _catalog_root(given: str | None) -> Path:
    """The catalog's root directory (`--catalog`, else the default);
    _BadInput if it is not a directory."""
    from phblab import catalog

    root = Path(given) if given is not None else catalog.default_catalog()
    if not root.is_dir():
        raise _BadInput(f"--catalog {root}: not a directory (the catalog is a directory of scenario files)")
    return root


def _reproduce(args: argparse.Namespace) -> int:
    from phblab import catalog, outdir

    _check_backend(args)
    root = _catalog_root(args.catalog)
    try:
        if args.list:
            _catalog_note(args)
            errors: list[catalog.CatalogError] = []
            print(catalog.list_entries(catalog.load_catalog(root, errors)))
            for e in errors:
                print(f"error: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT if errors else 0
        if args.all:
            entries = catalog.load_catalog(root)
        elif args.ids:
            entries = catalog.find_entries(args.ids, root)
        else:
            raise _BadInput("give entry ids, --all or --list (see phblab reproduce --help)")
        entries = _for_backend(entries, args.backend, every=args.all)
    except catalog.CatalogError as e:
        raise _BadInput(str(e)) from None
    results = args.results or catalog.DEFAULT_RESULTS
    for entry in entries:  # every output directory is checked before anything runs
        outdir.claim(catalog.entry_dir(entry, results, args.backend), "reproduction")
    _catalog_note(args)  # once nothing can be refused: a refusal stays one line
    failed: list[str] = []
    unexplained: list[str] = []
    with _DaskClient(args.dask) as client:
        for i, entry in enumerate(entries):
            if i:
                print()
            try:
                outcome = catalog.reproduce(
                    entry,
                    results=results,
                    jobs=args.jobs,
                    client=client,
                    seeds=args.seeds,
                    progress=not args.quiet,
                    backend=args.backend,
                    congestion=args.congestion,
                )
            except ValueError as e:  # a CatalogError, or a value the sweep refused
                if isinstance(e, _core.ScenarioError):
                    raise
                raise _BadInput(str(e)) from None
            print(catalog.format_outcome(outcome), flush=True)
            if not outcome.passed:
                failed.append(entry.id)
            unexplained += [entry.id] * sum(c.failure == catalog.UNEXPLAINED for c in outcome.checks)
    if len(entries) > 1:
        print()
        print(
            f"{len(entries) - len(failed)}/{len(entries)} entries pass"
            + (f"; failing: {', '.join(failed)}" if failed else "")
        )
        if unexplained:
            where = ", ".join(dict.fromkeys(unexplained))
            print(f"{len(unexplained)} failing checks without a cause (unexplained), in {where}")
    return EXIT_REPRODUCTION_FAILED if failed else 0


def _report(args: argparse.Namespace) -> int:
    from phblab import catalog, report

    results = args.results or catalog.DEFAULT_RESULTS
    if args.run:
        _check_backend(args)
    elif args.backend != "simulate" or args.congestion is not None:
        raise _BadInput("--backend and --congestion apply to --run; the report shows every backend's results it finds")
    elif args.results is not None and not Path(results).is_dir():
        raise _BadInput(f"--results {results}: not a directory (run `phblab reproduce` first, or give --run)")
    root = _catalog_root(args.catalog)
    if args.format != "markdown":  # the Markdown outcome is one file (markdown.write checks it)
        out = _out_dir(args.out, lambda: report.DEFAULT_OUT, "report")
    _catalog_note(args)  # once the output is accepted: a refusal stays one line
    try:
        entries = catalog.find_entries(args.ids, root) if args.ids else catalog.load_catalog(root)
        if args.run:
            for entry in _for_backend(entries, args.backend, every=not args.ids):
                outcome = catalog.reproduce(
                    entry,
                    results=results,
                    jobs=args.jobs,
                    progress=True,
                    backend=args.backend,
                    congestion=args.congestion,
                )
                print(catalog.format_outcome(outcome).splitlines()[-1].strip() + f"  ({entry.id})")
        if args.format == "markdown":
            from phblab.catalog import markdown

            text = markdown.render(entries, results, _core.version())
            if args.out is None:
                sys.stdout.write(text)
                return 0
            page = markdown.write(args.out, text)
        else:
            page = report.write_report(out=out, results=results, entries=entries)
    except (ValueError, FileExistsError) as e:  # a CatalogError, a value the sweep refused, a foreign --out
        if isinstance(e, _core.ScenarioError):
            raise
        raise _BadInput(str(e)) from None
    print(f"report written to {page}", file=sys.stderr if args.format == "markdown" else sys.stdout)
    return 0


def _check_paths(args: argparse.Namespace) -> None:
    """Refuses an empty directory option (`--out ''` would otherwise mean
    the default, or the current directory)."""
    for option in ("out", "results", "catalog"):
        if getattr(args, option, None) == "" and not (option == "results" and args.command == "plot"):
            raise _BadInput(f"--{option} '': give a directory (or leave the option out for the default)")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_paths(args)
        return args.func(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Nothing more can reach the reader: end quietly, as a command killed
        # by SIGPIPE does; stdout goes to /dev/null so the last flush cannot fail.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except Exception as e:
        status, message = _failure(e)
        if status is None:
            if os.environ.get("PHBLAB_TRACEBACK"):
                raise
            status = EXIT_RUN_FAILED
        print(f"error: {printable(message)}", file=sys.stderr)
        return status


def entry() -> NoReturn:
    """The `phblab` command (and `python -m phblab`): `main`, then exit with
    its status. After Ctrl-C the process ends at once, its output flushed,
    without the interpreter's clean-up of loaded modules (pandas' alone
    takes 0.3 s): everything phblab writes was committed or removed while
    the interruption unwound, and the lock is released by the system."""
    status = main()
    if status == EXIT_INTERRUPTED:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


#: the longest message printed whole; a longer one keeps its start and end
MESSAGE_MAX_CHARS = 600


def printable(message: str) -> str:
    """`message` safe for a terminal, on one line: control and invisible
    characters escaped (a name holding an escape sequence never reaches the
    terminal raw), and cut in the middle past `MESSAGE_MAX_CHARS` (a 100 KB
    value is not echoed whole)."""
    import unicodedata

    shown = "".join(
        c
        if c == " " or unicodedata.category(c) not in ("Cc", "Cf", "Zl", "Zp")
        else c.encode("unicode_escape").decode()
        for c in message
    )
    if len(shown) > MESSAGE_MAX_CHARS:
        half = MESSAGE_MAX_CHARS // 2
        shown = f"{shown[:half]} … {shown[-half:]}"
    return shown


def _failure(e: Exception) -> tuple[int | None, str]:
    """The exit status and one-line message of an exception a command
    raised; status None for one that should not happen (a bug)."""
    from phblab import outdir
    from phblab.emulate import EmulateError
    from phblab.sweep import SweepError

    if isinstance(e, (_core.ScenarioError, _BadInput, outdir.NotOurs, outdir.Busy)):
        return EXIT_BAD_INPUT, str(e)
    if isinstance(e, SweepError):
        return EXIT_RUN_FAILED, str(e)
    if isinstance(e, EmulateError):  # refused for its input or the machine (privileges), or failed
        return (EXIT_BAD_INPUT, str(e)) if e.bad_input else (EXIT_RUN_FAILED, f"the emulation failed: {e}")
    if isinstance(e, _core.RunError):
        return EXIT_RUN_FAILED, f"the simulation failed (a bug in phblab, please report it): {e}"
    if isinstance(e, OSError):  # a full disk, a permission, a vanished file
        where = f"{e.filename}: " if e.filename else ""
        return EXIT_BAD_INPUT, f"{where}{e.strerror or e}"
    return None, (
        f"{type(e).__name__}: {e} (unexpected: a bug in phblab, please report it; PHBLAB_TRACEBACK=1 shows where)"
    )
