"""Run the CLI, SIGKILL-ing itself at the K-th ``os.replace`` of pipeline.ingest.outputs (the
renames of a commit): ``python killer.py K tormortem-args...`` (used by test_faults)."""

import os
import signal
import sys

from pipeline.cli import main
from pipeline.ingest import outputs

K = int(sys.argv[1])
_real = os.replace
_calls = [0]


def _replace(a: object, b: object) -> None:
    _real(a, b)  # type: ignore[arg-type]
    _calls[0] += 1
    if _calls[0] == K:
        os.kill(os.getpid(), signal.SIGKILL)


outputs.os.replace = _replace  # type: ignore[assignment]
sys.argv = ["tormortem", *sys.argv[2:]]
main()
