"""Fault injection: kill ingest and analyze (SIGKILL, SIGINT) at random points and at every
rename of the commit, then check that the previous output is intact or a complete new one is
there (issue 15, section 6). A kill point is a delay after the start, drawn from a seeded
generator over the run's measured duration, or the K-th rename of the commit.

The quick run tries 8 random points and every commit rename of an ingest; the slow run tries
40 random points per command and every commit rename of an analyze."""

from __future__ import annotations

import importlib.util
import random
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from pipeline.ingest import outputs
from tests.reliability.conftest import CLI, DEMO, cli, manifest

KILLER = Path(__file__).with_name("killer.py")


def _reference(cmd: str, logs: Path, tmp: Path) -> tuple[dict[str, object], float]:
    """The manifest a complete run writes (minus what names the folder), and its duration."""
    out = tmp / f"ref-{cmd}"
    t0 = time.monotonic()
    r = cli(cmd, logs, "--out", out)
    assert r.returncode == 0, r.stderr
    return _identity(manifest(out)), time.monotonic() - t0


def _identity(doc: dict[str, object]) -> dict[str, object]:
    return {k: doc[k] for k in ("stage", "argv", "inputs", "tool")}


def _check(out: Path, old: dict[str, object], new: dict[str, object]) -> str:
    with outputs.reading(out) as doc:  # rolls a dead writer's commit forward first
        outputs.verify(out)
        if doc == old:
            state = "previous"
        else:
            assert _identity(doc) == new, "neither the previous output nor a complete new one"
            state = "new"
    assert not (out / outputs.STAGING).exists() and not (out / outputs.COMMIT).exists()
    return state


_CLI_INIT = Path(str(importlib.util.find_spec("pipeline.cli").origin)).resolve()  # type: ignore[union-attr]
# the line of pipeline/cli/__init__.py that installs the early SIGINT handler
_HANDLER_LINE = next(n for n, line in enumerate(_CLI_INIT.read_text().splitlines(), 1)
                     if "signal.signal(" in line)


def _before_handler(frame: str) -> bool:
    """A frame of pipeline/cli/__init__.py above the line installing its handler (its own
    ``import signal`` runs there, before anything of tormortem can catch a Ctrl-C)."""
    m = re.match(r'File "(.+)", line (\d+)', frame)
    return bool(m) and Path(m[1]).resolve() == _CLI_INIT and int(m[2]) < _HANDLER_LINE


_STDLIB = Path(sysconfig.get_paths()["stdlib"]).resolve()


def _in_stdlib(frame: str) -> bool:
    """A frame of Python's own library (``import signal`` builds its enums in enum.py)."""
    m = re.match(r'File "(.+)", line \d+', frame)
    return bool(m) and Path(m[1]).resolve().is_relative_to(_STDLIB) and (
        "site-packages" not in Path(m[1]).parts)


def _in_launcher(err: bytes) -> bool:
    """A KeyboardInterrupt whose every frame is the launcher's ``-c`` line, the import
    machinery, the CLI package's first lines before its handler, or Python's own library
    those lines import: nothing of tormortem had run (nothing opened, nothing written)."""
    frames = [x.strip() for x in err.decode(errors="replace").splitlines()
              if x.strip().startswith('File "')]
    return b"KeyboardInterrupt" in err and bool(frames) and all(
        f.startswith(('File "<string>"', 'File "<frozen ')) or _before_handler(f)
        or _in_stdlib(f) for f in frames)


def _random_kills(demo_analysis: Path, tmp_path: Path, cmd: str, logs: Path, n: int,
                  seed: int) -> list[tuple[str, float, int, str]]:
    new, seconds = _reference(cmd, logs, tmp_path)
    rng = random.Random(seed)
    tried = []
    for i in range(n):
        out = tmp_path / f"{cmd}-{i}"
        shutil.copytree(demo_analysis, out, copy_function=shutil.copy2)
        old = manifest(out)
        sig = (signal.SIGKILL, signal.SIGINT)[i % 2]
        delay = rng.uniform(0.0, seconds * 1.05)
        p = subprocess.Popen([*CLI, cmd, str(logs), "--out", str(out)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(delay)
        p.send_signal(sig)
        _, err = p.communicate(timeout=120)
        state = _check(out, old, new)
        if sig == signal.SIGINT:
            # 130 while it runs; 0 if it had finished; -2 (death by the signal: Python resets
            # the handlers while it shuts down) only once the new output is complete; and
            # before any of tormortem runs, Python's own answer: 1 when the signal comes while
            # it starts ("Fatal Python error: init_import_site"), -2 with a KeyboardInterrupt
            # in the launcher's own line (CLI's -c, as in pip's console script) before the
            # first module of tormortem installs its handler
            started = b"init_import_site" not in err and not _in_launcher(err)
            assert (p.returncode in (0, 130) or (p.returncode == -2 and state == "new")
                    or (p.returncode in (1, -2) and not started and state == "previous")), err
            assert b"Traceback" not in err or not started
        tried.append((signal.Signals(sig).name, round(delay, 3), p.returncode, state))
        shutil.rmtree(out)
    return tried


def _commit_kills(demo_analysis: Path, tmp_path: Path, cmd: str, logs: Path
                  ) -> list[tuple[int, str]]:
    new, _ = _reference(cmd, logs, tmp_path)
    n_files = len(manifest(tmp_path / f"ref-{cmd}")["files"])  # type: ignore[arg-type]
    tried = []
    for k in range(1, n_files + 3):  # the journal, each file, the manifest
        out = tmp_path / f"commit-{k}"
        shutil.copytree(demo_analysis, out, copy_function=shutil.copy2)
        old = manifest(out)
        r = subprocess.run([sys.executable, str(KILLER), str(k), cmd, str(logs), "--out",
                            str(out)], capture_output=True, timeout=300, check=False)
        assert r.returncode == -signal.SIGKILL, r.stderr
        tried.append((k, _check(out, old, new)))
        shutil.rmtree(out)
    return tried


@pytest.mark.slow  # the quick loop's budget (5 min on 2 cores); test_many_random_kills: 80
def test_random_kills_of_ingest_and_analyze(demo_analysis: Path, big_log: Path,
                                            tmp_path: Path) -> None:
    tried = _random_kills(demo_analysis, tmp_path, "ingest", big_log, 4, seed=1)
    tried += _random_kills(demo_analysis, tmp_path, "analyze", DEMO, 4, seed=2)
    print("kill points (signal, delay s, exit code, state):", tried)
    assert len(tried) == 8


@pytest.mark.slow  # ~8 s: the quick loop's budget (5 min on 2 cores)
def test_kills_at_every_rename_of_an_ingest_commit(demo_analysis: Path,
                                                   tmp_path: Path) -> None:
    tried = _commit_kills(demo_analysis, tmp_path, "ingest", DEMO / "slurm")
    print("commit kill points (rename, state):", tried)
    # before the journal exists the old output stands; from its rename on, the new one
    assert [s for _, s in tried] == ["previous"] * 0 + ["new"] * len(tried)


@pytest.mark.slow
def test_many_random_kills(demo_analysis: Path, big_log: Path, tmp_path: Path) -> None:
    tried = _random_kills(demo_analysis, tmp_path, "ingest", big_log, 40, seed=11)
    tried += _random_kills(demo_analysis, tmp_path, "analyze", DEMO, 40, seed=12)
    print("kill points (signal, delay s, exit code, state):", tried)
    states = {s for *_, s in tried}
    assert states == {"previous", "new"}  # both sides of the commit were hit


@pytest.mark.slow
def test_kills_at_every_rename_of_an_analyze_commit(demo_analysis: Path,
                                                    tmp_path: Path) -> None:
    tried = _commit_kills(demo_analysis, tmp_path, "analyze", DEMO)
    print("commit kill points (rename, state):", tried)
    assert all(s == "new" for _, s in tried)
