"""Shared fixtures: a small dumbbell scenario written into the test's tmp_path.

Two hosts, two routers, a 10 Mb/s RED bottleneck; 2 Mb/s of CBR (class ef)
and ten Pareto ON/OFF sources (class be, 5 Mb/s on average); 5 s with a
1 s warm-up. The offered 7 Mb/s fits the bottleneck, so there is little loss.
"""

from pathlib import Path

import pytest

SCENARIO = """\
[run]
duration = "5s"
warmup = "1s"
seed = 1

[classes]
be = 0
ef = 46

[nodes]
hosts = ["s1", "d1"]
routers = ["r1", "r2"]

[qdiscs.bottleneck]
kind = "red"
limit = "250pkt"
min_th = 60
max_th = 180
w_q = 0.002
max_p = 0.1

[[links]]
between = ["s1", "r1"]
rate = "100Mbps"
delay = "1ms"

[[links]]
between = ["r1", "r2"]
rate = "10Mbps"
delay = "10ms"
qdisc = "bottleneck"

[[links]]
between = ["r2", "d1"]
rate = "100Mbps"
delay = "1ms"

[[traffic]]
name = "cbr"
kind = "cbr"
from = "s1"
to = "d1"
class = "ef"
packet_size = "500B"
rate = "2Mbps"

[[traffic]]
name = "onoff"
kind = "pareto_onoff"
from = "s1"
to = "d1"
class = "be"
count = 10
packet_size = "500B"
rate = "1Mbps"
on_mean = "50ms"
off_mean = "50ms"
shape = 1.5
"""

TABLES = ["classes", "flows", "timeseries"]


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SCENARIO)
    return path
