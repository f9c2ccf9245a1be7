"""Every scenario in scenarios/examples/ runs and reproduces its recorded
summary (scenarios/examples/expected/<name>.json): the per-class rows of the
`classes` table and per-group totals of the `flows` table. Those that run
only emulated (they run commands) are refused by the simulator here and
emulated in tests/test_emulate.py.

Runs are deterministic, so the comparison is tight (relative 1e-9, for
float formatting only). After a deliberate change of behaviour, regenerate
the records with

    PHBLAB_UPDATE_EXPECTED=1 .venv/bin/pytest tests/test_examples.py

and explain the change in the commit.
"""

import json
import math
import os
from pathlib import Path

import pytest

import phblab

EXAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "examples"
EXPECTED = EXAMPLES / "expected"
CLASS_COLUMNS = ["arrivals", "departures", "dropped", "loss_rate", "delay_mean_s", "delay_p99_s", "throughput_bps"]
FLOW_COLUMNS = ["sent_pkts", "received_pkts", "lost_pkts", "goodput_bps", "retransmissions", "timeouts"]


def digest(result) -> dict:
    classes = {
        f"{row.scope} {row['class']}": {c: row[c] for c in CLASS_COLUMNS}
        for _, row in result.classes.iterrows()
        if row.scope == "end-to-end" or row.dropped > 0 or row.delay_p99_s > 1e-3
    }
    groups = result.flows.groupby("group")[FLOW_COLUMNS].sum()
    flows = {group: {c: float(groups.loc[group, c]) for c in FLOW_COLUMNS} for group in groups.index}
    return json.loads(json.dumps({"classes": classes, "flow_groups": flows}, default=float))


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


EMULATION_ONLY = [p for p in sorted(EXAMPLES.glob("*.toml")) if 'kind = "command"' in p.read_text()]


@pytest.mark.parametrize(
    "path", [p for p in sorted(EXAMPLES.glob("*.toml")) if p not in EMULATION_ONLY], ids=lambda p: p.stem
)
def test_example_reproduces_its_recorded_summary(path):
    got = digest(phblab.run(path))
    record = EXPECTED / f"{path.stem}.json"
    if os.environ.get("PHBLAB_UPDATE_EXPECTED") == "1":
        record.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert record.exists(), f"no recorded summary {record}; run with PHBLAB_UPDATE_EXPECTED=1 once"
    expected = json.loads(record.read_text())
    assert same(got, expected), f"{path.name} no longer reproduces {record.name}"


def test_examples_that_run_commands_are_refused_by_the_simulator():
    assert [p.stem for p in EMULATION_ONLY] == ["emulate-commands"]
    for path in EMULATION_ONLY:
        with pytest.raises(ValueError, match=r"traffic\[1\]\.kind: .*only with `phblab emulate`"):
            phblab.run(path)
