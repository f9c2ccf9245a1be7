"""Interruption: Ctrl-C stops a run or a sweep within half a second, and a
sweep's workers never outlive it."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import phblab
from conftest import SCENARIO

# Long enough to take many seconds in the core (about 20 s of simulated
# time per second of wall-clock time for this scenario).
LONG = SCENARIO.replace('duration = "5s"', 'duration = "3000s"')


@pytest.fixture
def long_file(tmp_path: Path) -> Path:
    path = tmp_path / "long.toml"
    path.write_text(LONG)
    return path


def children(pid: int) -> set[int]:
    """The pids whose parent is `pid` (from /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(entry))
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start(*args, cwd):
    return subprocess.Popen(
        [sys.executable, "-m", "phblab", *map(str, args)],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def interrupt_and_time(proc, after_s: float) -> float:
    time.sleep(after_s)
    assert proc.poll() is None, "the run ended before it was interrupted: make it longer"
    sent = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    proc.wait(timeout=30)
    return time.monotonic() - sent


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def test_ctrl_c_stops_a_run_within_half_a_second(long_file, tmp_path):
    proc = start("run", long_file, "-q", "--out", tmp_path / "out", cwd=tmp_path)
    took = interrupt_and_time(proc, 1.5)
    err = proc.stderr.read()
    assert took < 0.5, f"stopped {took:.2f} s after SIGINT"
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_ctrl_c_interrupts_the_python_api(long_file):
    main_thread = threading.main_thread().ident
    timer = threading.Timer(1.0, lambda: signal.pthread_kill(main_thread, signal.SIGINT))
    timer.start()
    start_s = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        phblab.run(long_file)
    took = time.monotonic() - start_s - 1.0
    assert took < 0.5, f"stopped {took:.2f} s after SIGINT"


def start_sweep(long_file, tmp_path):
    """A two-worker sweep of the long scenario, once its workers run: (process, worker pids)."""
    proc = start("sweep", long_file, "--grid", "qdiscs.bottleneck.max_p=0.1,0.2", "-j", "2", "-q", cwd=tmp_path)
    time.sleep(2.0)
    workers = children(proc.pid)
    assert len(workers) >= 2, "the sweep's workers did not start"
    return proc, workers


@needs_proc
def test_ctrl_c_stops_a_sweep_and_its_workers(long_file, tmp_path):
    proc, workers = start_sweep(long_file, tmp_path)
    took = interrupt_and_time(proc, 0)
    err = proc.stderr.read()
    assert took < 1.0, f"stopped {took:.2f} s after SIGINT"
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert not any(alive(w) for w in workers)


@needs_proc
def test_the_workers_of_a_killed_sweep_exit_with_it(long_file, tmp_path):
    proc, workers = start_sweep(long_file, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 3
    while any(alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(w) for w in workers), "a worker outlived its killed parent"


def test_a_sigint_held_while_workers_start_is_raised_after(monkeypatch):
    """A Ctrl-C during the fork that starts a pool's workers lands in the
    fork's own handlers, which drop it: `_sigint_held` keeps it and raises it
    once the workers are started."""
    from phblab.sweep import _sigint_held

    with pytest.raises(KeyboardInterrupt):
        with _sigint_held():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs here, and raises nothing
        pytest.fail("the held SIGINT was not raised at the end of the block")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_interrupted_pool_starts_no_further_run(long_file):
    """A worker between two runs ignores SIGINT; the pool's stop event keeps
    it from starting the next run it takes from the queue."""
    from phblab.sweep import _LocalPool, run_one

    pool = _LocalPool(1)
    busy = pool.submit(time.sleep, 0.5)  # not a run: SIGINT is ignored here
    queued = pool.submit(run_one, long_file.read_text(), str(long_file), 1, [])
    time.sleep(0.1)
    pool.interrupt()
    try:
        assert busy.result(timeout=5) is None
        with pytest.raises(KeyboardInterrupt):
            queued.result(timeout=5)  # at once, not after the run's 150 s
    finally:
        pool.shutdown()


def _ignore_sigint_and_sleep(seconds: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    time.sleep(seconds)


def test_an_interrupted_pool_kills_a_worker_that_does_not_stop():
    from phblab.sweep import STOP_GRACE_S, _LocalPool

    pool = _LocalPool(1)
    pool.submit(_ignore_sigint_and_sleep, 60)
    time.sleep(0.3)
    start_s = time.monotonic()
    pool.interrupt()
    pool.shutdown()
    took = time.monotonic() - start_s
    assert took < STOP_GRACE_S + 1.0, f"the pool took {took:.2f} s to stop"


@needs_proc
def test_ctrl_c_stops_a_sweep_of_short_runs_at_any_moment(tmp_path):
    """Many short runs on two workers: whatever the moment (workers starting,
    between runs, mid-run), the sweep stops within half a second and says so."""
    path = tmp_path / "mid.toml"
    path.write_text(SCENARIO.replace('duration = "5s"', 'duration = "3000s"'))
    grid = "qdiscs.bottleneck.max_p=" + ",".join(f"0.{i}" for i in range(1, 10))
    for after_s in (0.4, 1.3, 2.6):
        proc = start(
            "sweep", path, "--grid", grid, "--seeds", "2", "-j", "2", "-q", "--out", tmp_path / "sw", cwd=tmp_path
        )
        took = interrupt_and_time(proc, after_s)
        err = proc.stderr.read()
        assert proc.returncode == 130 and "interrupted" in err, f"SIGINT at {after_s} s: {proc.returncode} {err}"
        assert took < 0.5, f"SIGINT at {after_s} s: stopped {took:.2f} s later"
