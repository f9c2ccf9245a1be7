"""phblab: a laboratory for router per-hop behaviours (schedulers, AQM,
markers, policers).

The simulator is written in Rust (`phblab._core`); this package is its front
end: `phblab.run` and `phblab.validate` take a scenario file (or a dict) and
return pandas DataFrames, and the `phblab` command wraps them.

    >>> import phblab
    >>> res = phblab.run("scenarios/examples/dumbbell-red.toml", seed=2)
    >>> res.classes[res.classes.scope == "end-to-end"]
"""

from phblab._core import RunError, ScenarioError
from phblab._core import version as _core_version
from phblab.api import run, validate
from phblab.results import Results

__version__ = _core_version()

__all__ = ["__version__", "run", "validate", "Results", "ScenarioError", "RunError"]
