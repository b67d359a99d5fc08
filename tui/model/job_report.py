"""Provides what `gpuscope report` reads besides the samples: the work the job's log says it did
(`work_done`), for the energy per epoch and per sample.

    work, why = work_done(scopes, logs=args.log)   # Work or None, and why none

The logs are the ones given (`report --log FILE`), else the job's output files as the recording's
scope names them (StdOut and StdErr, per node and task, and `rank-N.log` beside them: found as
the watch's output pane finds them, tui/model/job_outputs.py). They are read by the run-log
readers of `gpuscope scaling` (parsers/runlogs: the seeds' epoch lines, MLPerf `:::MLLOG`
events, ReFrame perflogs), so a log is understood the same way in both.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

from gpuscope.metrics.job.energy import Work, work_from_runs
from gpuscope.metrics.safe_text import clean
from gpuscope.metrics.samples import JobScope
from gpuscope.tui.model.job_outputs import all_outputs, job_files

MAX_SHOWN = 3
"""Log names listed in the `from` cell before "and N more"."""


def job_logs(scopes: Mapping[str, JobScope]) -> list[str]:
    """Every output file of the recorded job that exists, over its nodes (scope per node)."""
    found: list[str] = []
    for host, scope in scopes.items():
        files = job_files(scope, host)
        if files is not None:
            found += all_outputs(files)
    return list(dict.fromkeys(found))


def _names(paths: Sequence[str]) -> str:
    shown = ", ".join(clean(os.path.basename(p) or p) for p in paths[:MAX_SHOWN])
    return shown + (f" and {len(paths) - MAX_SHOWN} more" if len(paths) > MAX_SHOWN else "")


def work_done(scopes: Mapping[str, JobScope], logs: Sequence[str] = ()) -> tuple[Work | None, str]:
    """The work the job's logs give (epochs, samples), or None and why."""
    paths = list(logs) or job_logs(scopes)
    if not paths:
        named = [s for s in scopes.values() if s.kind == "job" and (s.stdout or s.stderr)]
        if named:
            return None, "the job's output files named in the recording are not here (--log FILE gives a log)"
        return None, "no log of the job: the recording names no output file (--log FILE gives one)"
    from gpuscope.parsers.runlogs.read import read_runs  # pandas: only when there is a log to read

    runs = read_runs(paths).runs
    if runs.empty:
        return None, f"no run found in {_names(paths)} (epochs and samples come from seed, MLPerf and ReFrame logs)"
    return work_from_runs(runs, _names(paths)), ""
