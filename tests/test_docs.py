"""The README's and the docs' examples against the tool: the tour's scenario
and the output its commands print, the listings of result files, the
messages of scenario-format.md, and every mechanism page's TOML example,
so that none of them can drift from what phblab does."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import phblab
from phblab.results import TABLES

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
RESULTS_DOC = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
FORMAT_DOC = (ROOT / "docs" / "scenario-format.md").read_text(encoding="utf-8")


def blocks(text: str, lang: str) -> list[str]:
    """The contents of the fenced blocks of `text` in language `lang`."""
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, flags=re.S | re.M)


def section(text: str, heading: str) -> str:
    """`text` from `heading` to the next heading of the same level."""
    level = heading.split(" ")[0]
    start = text.index(heading + "\n")
    end = text.find(f"\n{level} ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def phblab_cli(args: list[str], cwd: Path) -> str:
    """What `phblab ARGS` prints in `cwd`, stdout and stderr as a terminal shows them."""
    r = subprocess.run(
        [sys.executable, "-m", "phblab", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    return r.stdout


def masked(output: str) -> str:
    """Output without what differs from run to run: wall-clock times."""
    return re.sub(r"in \d+(\.\d+)? s\b", "in T s", output).rstrip()


TOUR = section(README, "## A five-minute tour")


def tour_files(tmp_path: Path) -> None:
    """small.toml, the tour's scenario, and typo.toml, the same file with
    `duration` misspelt, as the README says; the example the tour traces."""
    small = blocks(TOUR, "toml")[0]
    (tmp_path / "small.toml").write_text(small)
    (tmp_path / "typo.toml").write_text(small.replace("duration =", "durration =", 1))
    examples = tmp_path / "scenarios" / "examples"
    examples.mkdir(parents=True)
    (examples / "traced-bottleneck.toml").write_text((ROOT / "scenarios/examples/traced-bottleneck.toml").read_text())


def test_the_tour_s_commands_print_what_the_readme_shows(tmp_path):
    tour_files(tmp_path)
    shown = 0
    for block in blocks(TOUR, "console"):
        for command, expected in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n?)*)", block, flags=re.M):
            args = command.split()
            assert args[0] == "phblab", command
            assert masked(phblab_cli(args[1:], tmp_path)) == masked(expected), f"$ {command}"
            shown += 1
    assert shown >= 6  # validate (ok and a typo), run, plot, a traced run and its flow's plot


def test_the_tour_s_scenario_shows_what_the_tour_talks_about(tmp_path):
    """Its bottleneck queues and RED drops early: the run's summary has the
    link's row, with early drops."""
    tour_files(tmp_path)
    res = phblab.run(tmp_path / "small.toml")
    link = res.classes[res.classes.scope == "r1->r2"]
    assert link.drop_early.sum() > 0 and (link.delay_mean_s > 0.01).all()
    assert not res.timeseries.empty


def listed_files(listing: str) -> set[str]:
    """The file names a listing's lines begin with."""
    return set(re.findall(r"^([a-z_]+\.(?:json|toml|parquet))\b", listing, flags=re.M))


def test_the_result_listings_name_every_file_a_run_writes(tmp_path):
    tour_files(tmp_path)
    phblab.run(tmp_path / "small.toml", out=tmp_path / "out")
    written = {p.name for p in (tmp_path / "out").iterdir() if p.is_file() and not p.name.startswith(".")}
    assert written == {"summary.json", "scenario.toml", "manifest.json", *(f"{t}.parquet" for t in TABLES)}
    readme_listing = TOUR[TOUR.index("A results directory holds:") :]
    assert listed_files(blocks(readme_listing, "")[0]) == written
    assert set(re.findall(r"^\| `([a-z_]+\.(?:json|toml|parquet))` \|", RESULTS_DOC, flags=re.M)) == written
    for command in (["run", "--help"], ["emulate", "--help"]):
        shown = " ".join(phblab_cli(command, tmp_path).split())
        assert all(f"{t}.parquet" in shown for t in TABLES), command


def test_flow_names_are_as_documented(tmp_path):
    """results.md: a group of several flows names them `<group>.<index>`."""
    tour_files(tmp_path)
    flows = phblab.run(tmp_path / "small.toml").flows
    assert list(flows.flow[flows.group == "onoff"]) == [f"onoff.{i}" for i in range(16)]
    assert "with `.<index>` (from 0" in RESULTS_DOC


def test_overrides_are_recorded_alike_from_the_command_line_and_python(tmp_path):
    tour_files(tmp_path)
    out = tmp_path / "cli"
    phblab_cli(["run", "small.toml", "-q", "--out", str(out), "--set", "links[1].rate=5Mbps"], tmp_path)
    cli = phblab.load(out).summary["overrides"]
    api = phblab.run(tmp_path / "small.toml", overrides={"links[1].rate": "5Mbps"}).summary["overrides"]
    assert cli == api == ['links[1].rate="5Mbps"']
    assert 'links[1].rate=\\"5Mbps\\"' in README


def test_scenario_format_s_messages_are_the_tool_s(tmp_path):
    """The messages at the top of scenario-format.md are what phblab prints
    for the page's complete example with the mistakes the page names."""
    example = blocks(section(FORMAT_DOC, "## A complete example"), "toml")[0]
    mistakes = [
        ("max_th = 180", "max_th = 50"),
        ('rate = "10Mbps"', 'rate = "10Mbs"'),
        ("duration =", "durration ="),
    ]
    shown = blocks(FORMAT_DOC[: FORMAT_DOC.index("## A complete example")], "")[0].strip().splitlines()
    assert len(shown) == len(mistakes)
    for (right, wrong), expected in zip(mistakes, shown, strict=True):
        assert example.count(right) >= 1, right
        (tmp_path / "dumbbell.toml").write_text(example.replace(right, wrong, 1))
        assert phblab_cli(["validate", "dumbbell.toml"], tmp_path).strip() == f"error: {expected}"


# ------------------------------------------------------------ mechanism pages

#: the codepoints of the DSCP names a page's example may use as classes
DSCP = {
    "be": 0,
    "af11": 10,
    "af12": 12,
    "af13": 14,
    "af21": 18,
    "af22": 20,
    "af23": 22,
    "af31": 26,
    "af32": 28,
    "af33": 30,
    "af41": 34,
    "af42": 36,
    "af43": 38,
    "ef": 46,
}


def class_names(doc) -> list[str]:
    """The classes a fragment names: queues' `classes`, conditioner rules'
    `match.classes` and the codepoints their colours mark."""
    names = ["be"]

    def walk(value, key=None):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key == "classes":
            names.append(value)
        elif isinstance(value, str) and key in ("green", "yellow", "red") and value not in ("pass", "drop"):
            names.append(value.lower())

    walk(doc)
    return list(dict.fromkeys(names))


def counts_cells(doc) -> bool:
    """Whether a fragment counts ATM cells (F-RED, DI-RO, F-GCRA, a limit in
    cells), which needs links with AAL5 framing."""
    if isinstance(doc, dict):
        return any(counts_cells(v) for v in doc.values())
    if isinstance(doc, list):
        return any(counts_cells(v) for v in doc)
    return isinstance(doc, str) and (doc in ("fred", "diro", "fgcra") or doc.endswith("cells"))


def scenario_around(fragment: dict) -> dict:
    """A whole scenario around a page's fragment (its `[qdiscs]` and
    `[conditioners]`): host `s` to host `d` over routers r0, r1, ..., each
    qdisc on one hop's forward direction, the first conditioner at the
    entry of `s -> r0`, and one CBR group per class the fragment names;
    every link with AAL5 framing if the fragment counts cells."""
    names = class_names(fragment)
    free = (c for c in range(1, 64) if c not in DSCP.values())
    classes = {n: DSCP[n] if n in DSCP else next(free) for n in names}
    qdiscs = list(fragment.get("qdiscs", {}))
    routers = [f"r{i}" for i in range(len(qdiscs) + 1)]
    links = [{"between": ["s", routers[0]], "rate": "100Mbps", "delay": "1ms"}]
    for name in list(fragment.get("conditioners", {}))[:1]:
        links[0]["conditioner_forward"] = name
    for i, q in enumerate(qdiscs):
        links.append({"between": [routers[i], routers[i + 1]], "rate": "10Mbps", "delay": "5ms", "qdisc_forward": q})
    links.append({"between": [routers[-1], "d"], "rate": "100Mbps", "delay": "1ms"})
    if counts_cells(fragment):
        for link in links:
            link["framing"] = "aal5"
    traffic = [
        {"name": f"t-{n}", "kind": "cbr", "from": "s", "to": "d", "class": n, "packet_size": "500B", "rate": "1Mbps"}
        for n in classes
    ]
    return {
        "run": {"duration": "1s"},
        "classes": classes,
        "nodes": {"hosts": ["s", "d"], "routers": routers},
        **fragment,
        "links": links,
        "traffic": traffic,
    }


MECHANISM_PAGES = sorted((ROOT / "docs" / "mechanisms").glob("*.md"))


@pytest.mark.parametrize("page", MECHANISM_PAGES, ids=lambda p: p.stem)
def test_every_mechanism_page_has_a_toml_example_that_validates(page):
    """Each page's ```toml blocks: a whole scenario (with `[run]`) validates
    as it is, a fragment inside `scenario_around`."""
    examples = blocks(page.read_text(encoding="utf-8"), "toml")
    assert examples, f"{page.name} has no TOML example"
    for text in examples:
        doc = tomllib.loads(text)
        phblab.validate(doc if "run" in doc else scenario_around(doc))


@pytest.mark.parametrize("page", ["trtcm", "wred", "wfq", "conditioner"])
def test_the_diffserv_pages_link_the_diffserv_example(page):
    text = (ROOT / "docs" / "mechanisms" / f"{page}.md").read_text(encoding="utf-8")
    assert "scenarios/examples/diffserv-wfq.toml" in section(text, "## Examples")
