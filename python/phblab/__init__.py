"""phblab: a laboratory for router per-hop behaviours (schedulers, AQM,
markers, policers).

The simulator is written in Rust (`phblab._core`); this package is its front
end: `phblab.run` and `phblab.validate` take a scenario file (or a dict) and
return pandas DataFrames, `phblab.sweep` runs a grid of values × seeds,
`phblab.load` reads a run's results directory, and the `phblab` command
wraps them.

    >>> import phblab
    >>> res = phblab.run("scenarios/examples/dumbbell-red.toml", seed=2)
    >>> res.classes[res.classes.scope == "end-to-end"]
    >>> sw = phblab.sweep("scenarios/examples/dumbbell-red.toml",
    ...                   grid={"qdiscs.bottleneck.max_p": [0.05, 0.1]}, seeds=3)

The workflow's modules: `phblab.stats` (mean and CI across seeds),
`phblab.plot` (figures), `phblab.catalog` (reproductions), `phblab.report`
(HTML report); `phblab.models` holds the analytic models (PFTK, the queue
law, RED's control function, the E-model). `phblab.sweep` is the function; import the module's other
names with `from phblab.sweep import ...`.

The names below are imported on first use (PEP 562), so that `import
phblab` and the `phblab` command start without loading what they do not
need (pandas above all).
"""

from importlib import import_module

from phblab._core import RunError, ScenarioError
from phblab._core import version as _core_version

__version__ = _core_version()

# name -> (module, attribute)
_LAZY = {
    "run": ("phblab.api", "run"),
    "validate": ("phblab.api", "validate"),
    "load": ("phblab.results", "load"),
    "Results": ("phblab.results", "Results"),
    "sweep": ("phblab.sweep", "sweep"),
    "open_sweep": ("phblab.sweep", "open_sweep"),
    "Sweep": ("phblab.sweep", "Sweep"),
    "SweepError": ("phblab.sweep", "SweepError"),
    "models": ("phblab.models", None),
}

__all__ = ["__version__", "ScenarioError", "RunError", *_LAZY]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'phblab' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = import_module(module) if attribute is None else getattr(import_module(module), attribute)
    if name != "sweep":  # importing phblab.sweep made it the (callable) submodule
        globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
