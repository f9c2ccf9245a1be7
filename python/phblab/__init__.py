"""phblab: a laboratory for router per-hop behaviours (schedulers, AQM,
markers, policers).

The simulator is written in Rust (`phblab._core`); this package is its front
end: `phblab.run` and `phblab.validate` take a scenario file (or a dict) and
return pandas DataFrames, `phblab.sweep` runs a grid of values × seeds, and
the `phblab` command wraps them.

    >>> import phblab
    >>> res = phblab.run("scenarios/examples/dumbbell-red.toml", seed=2)
    >>> res.classes[res.classes.scope == "end-to-end"]
    >>> sw = phblab.sweep("scenarios/examples/dumbbell-red.toml",
    ...                   grid={"qdiscs.bottleneck.max_p": [0.05, 0.1]}, seeds=3)

The workflow's modules: `phblab.stats` (mean and CI across seeds),
`phblab.plot` (figures), `phblab.catalog` (reproductions), `phblab.report`
(HTML report). `phblab.sweep` is the function; import the module's other
names with `from phblab.sweep import ...`.
"""

from phblab._core import RunError, ScenarioError
from phblab._core import version as _core_version
from phblab.api import run, validate
from phblab.results import Results
from phblab.sweep import Sweep, SweepError, open_sweep, sweep

__version__ = _core_version()

__all__ = [
    "__version__",
    "run",
    "validate",
    "sweep",
    "open_sweep",
    "Results",
    "Sweep",
    "ScenarioError",
    "RunError",
    "SweepError",
]
