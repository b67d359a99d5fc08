"""The job around a program: Flux trailers, echoed epochs, Slurm node counts and host lines."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscope.parsers.joblog import JobLog


def _read(lines: list[str]) -> tuple[JobLog, list[str]]:
    """The job log after `lines`, and the lines it left to the program."""
    job = JobLog()
    return job, [line for line in lines if not job.read(line.strip())]


def _event(name: str, timestamp: float, **context: object) -> str:
    return json.dumps({"timestamp": timestamp, "name": name, "context": context})


def test_flux_trailers_give_start_end_nodes_and_exit() -> None:
    job, left = _read([
        "% MAGMA 2.8.0", "  300  32  32  31  0.00 ( 776.35)",
        "START OF JOBSPEC", json.dumps({"resources": [{"type": "node", "count": 4}]}),
        "START OF EVENTLOG",
        _event("init", 1.0),
        _event("shell.start", 10.0, taskmap={"version": 1, "map": [[0, 1, 8, 1]]}),
        _event("shell.task-exit", 20.0, rank=0, exitcode=2),
        _event("done", 21.5),
    ])
    assert left == ["% MAGMA 2.8.0", "  300  32  32  31  0.00 ( 776.35)"]
    assert (job.start, job.end, job.exit_code, job.cancelled) == (10.0, 21.5, 2, False)
    assert job.nodes == 1  # the taskmap (where the job ran) over the jobspec (what it asked for)
    assert job.in_trailer


def test_a_signalled_task_or_a_cancel_exception_is_a_cancelled_run() -> None:
    assert _read(["START OF EVENTLOG", _event("shell.task-exit", 5.0, exitcode=143)])[0].cancelled
    assert _read(["START OF EVENTLOG", _event("exception", 5.0, type="cancel", severity=0)])[0].cancelled
    assert _read(["12.3s: job.exception type=cancel severity=0 interrupted by ctrl-C"])[0].cancelled
    assert not _read(["START OF EVENTLOG", _event("exception", 5.0, type="timeout")])[0].cancelled


def test_echoed_epochs_and_the_flux_job_exit_line() -> None:
    job, left = _read(["Start time: 1725142500", "Start time: 1725149999", "flux-job: task(s) exited with exit code 3", "End time: 1725142515.5"])
    assert left == []
    assert (job.start, job.end, job.exit_code) == (1725142500.0, 1725142515.5, 3)  # the first start, the last end


def test_an_eventlog_exit_code_wins_over_the_flux_job_line() -> None:
    job, _ = _read(["flux-job: task(s) exited with exit code 3", "START OF EVENTLOG", _event("shell.task-exit", 1.0, exitcode=1)])
    assert job.exit_code == 1


def test_slurm_node_count_and_host_lines() -> None:
    job, left = _read(["SLURM_JOB_NUM_NODES=4", "export SLURM_NNODES=2", "hostname: gpu-node-7", "SLURMD_NODENAME=gpu-node-8", "  64  64  3.1 ( 0.2)"])
    assert job.nodes == 2 and job.hosts == {"gpu-node-7", "gpu-node-8"}
    assert left == ["  64  64  3.1 ( 0.2)"]


def test_the_jobspec_does_not_override_nodes_already_known() -> None:
    job, _ = _read(["SLURM_NNODES=3", "START OF JOBSPEC", json.dumps({"resources": [{"type": "node", "count": 8}]})])
    assert job.nodes == 3


def test_broken_json_and_odd_records_say_nothing() -> None:
    job, left = _read(["START OF EVENTLOG", '{"name": "shell.start", "timestamp": "soon"}', '{"name": "done"', '[1, 2]',
                       '{"name": "shell.start", "timestamp": 1, "context": [1]}', '{"name": "shell.task-exit", "context": {"exitcode": "1"}}'])
    assert left == ["[1, 2]"]  # a JSON record starts with `{`; anything else is the program's
    assert (job.start, job.end, job.exit_code, job.nodes, job.cancelled) == (None, None, None, None, False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=120), st.sampled_from(["START OF EVENTLOG", "START OF JOBSPEC", "Start time: 1", "End time: 2"]),
                          st.builds(lambda d: json.dumps(d), st.dictionaries(st.sampled_from(["name", "timestamp", "context", "resources"]),
                                                                            st.recursive(st.none() | st.integers() | st.floats() | st.text(max_size=12),
                                                                                         lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                                                                                         max_leaves=8)))),
                max_size=30))
def test_any_lines_are_read_without_raising(lines: list[str]) -> None:
    job, _ = _read(lines)
    assert job.exit_code is None or isinstance(job.exit_code, int)
    assert job.nodes is None or isinstance(job.nodes, int)
    assert all(isinstance(h, str) and h for h in job.hosts)
