"""Hypothesis tests for every reader of `parsers.runlogs`: generated logs round-trip to the values
they were written with; arbitrary text (also behind each format's marker) never raises and never
gives a time of 0."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuscope.parsers.runlogs.read import read_runs

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
times = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
counts = st.integers(min_value=1, max_value=4096)
epochs = st.integers(min_value=1, max_value=50)


def _read(files: dict[str, str | bytes], **kwargs: object):  # type: ignore[no-untyped-def]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "runs"
        for name, content in files.items():
            path = root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8", errors="surrogatepass")
        result = read_runs([root], **kwargs)  # type: ignore[arg-type]
    assert not [f for f in result.findings if f.kind == "reader-bug"], result.findings
    assert not (result.runs["time_s"] == 0).any() if not result.runs.empty else True
    return result


@SETTINGS
@given(total=times, gpus=counts, nodes=st.integers(1, 64), copies=st.integers(1, 4), n_epochs=epochs, loss=st.floats(0, 10))
def test_seed002_round_trip(total: float, gpus: int, nodes: int, copies: int, n_epochs: int, loss: float) -> None:
    lines = [f"Number of nodes: {nodes}", f"Total GPUs: {gpus}", f"Max epochs: {n_epochs}"]
    for rank in range(copies):  # every rank prints the block; rank 0 is the slowest
        t = round(total, 2) - 0.01 * rank if rank else round(total, 2)
        lines += ["TRAINING COMPLETE", f"Total training time: {t:.2f} seconds ({t / 60:.2f} minutes)", f"Time per epoch: {t / n_epochs:.2f} seconds", f"Best validation loss: {loss:.4f}"]
    result = _read({"slurm-1.out": "\n".join(lines) + "\n"})
    assert len(result.runs) == 1
    run = result.runs.iloc[0]
    expected = round(total, 2)
    if expected > 0:
        assert run["time_s"] == float(f"{expected:.2f}")
    assert (run["gpus"], run["nodes"], run["resources"], run["epochs"]) == (gpus, nodes, gpus, n_epochs)
    assert run["quality"] == float(f"{loss:.4f}")


@SETTINGS
@given(total=times, threads=counts, n_epochs=epochs, train=st.integers(1, 10**6), correct=st.integers(0, 10000))
def test_seed004_round_trip(total: float, threads: int, n_epochs: int, train: int, correct: int) -> None:
    lines = [f"SLURM_CPUS_PER_TASK={threads}"]
    for epoch in range(1, n_epochs + 1):
        lines.append(f"Train Epoch: {epoch} [0/{train} (0%)]\tLoss: {1 / epoch:.6f}")
        lines.append(f"\nTest set: Average loss: 0.1000, Accuracy: {correct}/10000 ({100 * correct / 10000:.0f}%)\n")
    lines.append(f"\nTotal Training Time: {total} s\nNumber of epochs: {n_epochs}\nTotal epochs/s: {n_epochs / total}\n")
    result = _read({"log.mnist-5": "\n".join(lines)})
    run = result.runs.iloc[0]
    assert run["time_s"] == total and run["threads"] == threads and run["resources"] == threads
    assert run["epochs"] == n_epochs and run["samples"] == train * n_epochs
    assert math.isclose(run["quality"], correct / 10000)
    assert len(result.curves[result.curves["metric"] == "loss"]) == n_epochs


@SETTINGS
@given(start=st.integers(10**12, 2 * 10**12), duration_ms=st.integers(1, 10**8), nodes=st.integers(1, 512), per_node=st.integers(1, 16), success=st.booleans(), acc=st.floats(0, 1), batch=counts)
def test_mlperf_round_trip(start: int, duration_ms: int, nodes: int, per_node: int, success: bool, acc: float, batch: int) -> None:
    def event(t: int, key: str, value: object = None, **meta: object) -> str:
        return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": t, "event_type": "POINT_IN_TIME", "key": key, "value": value, "metadata": {"file": "x.py", "lineno": 1, **meta}})

    log = "\n".join([
        event(start - 5, "submission_benchmark", "bert"), event(start - 4, "global_batch_size", batch),
        "0: " + event(start, "run_start"), event(start + 1, "eval_accuracy", acc, epoch_num=1),
        event(start + duration_ms, "run_stop", status="success" if success else "aborted"),
    ])
    system = json.dumps({"number_of_nodes": str(nodes), "accelerators_per_node": str(per_node)})
    result = _read({"org/results/sys1/bert/result_0.txt": log, "org/systems/sys1.json": system})
    run = result.runs.iloc[0]
    assert run["time_s"] == duration_ms / 1000
    assert (run["nodes"], run["gpus"], run["resources"]) == (nodes, nodes * per_node, nodes * per_node)
    assert run["status"] == ("ok" if success else "aborted") and bool(run["converged"]) is success
    assert run["quality"] == acc and run["set_global_batch_size"] == batch


@SETTINGS
@given(rows=st.lists(st.tuples(st.integers(1, 10**7), st.integers(0, 3 * 86400), counts, counts, st.sampled_from(["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 0"])), min_size=1, max_size=6, unique_by=lambda r: r[0]))
def test_sacct_round_trip(rows: list[tuple[int, int, int, int, str]]) -> None:
    def hms(s: int) -> str:
        d, s = divmod(s, 86400)
        return (f"{d}-" if d else "") + f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"

    lines = ["JobID|JobName|AllocCPUS|Elapsed|State|AllocTRES"]
    for job, seconds, cpus, gpus, state in rows:
        lines.append(f"{job}|train|{cpus}|{hms(seconds)}|{state}|billing={cpus},cpu={cpus},gres/gpu:a100={gpus},gres/gpu={gpus},node=1")
        lines.append(f"{job}.batch|batch|{cpus}|{hms(seconds)}|{state}|cpu={cpus},gres/gpu={gpus},node=1")
    result = _read({"sacct.txt": "\n".join(lines) + "\n"})
    assert len(result.runs) == len(rows)
    status = {"COMPLETED": "ok", "FAILED": "failed", "TIMEOUT": "timeout", "CANCELLED by 0": "cancelled"}
    for (_job, seconds, cpus, gpus, state), (_, run) in zip(rows, result.runs.iterrows()):
        assert run["gpus"] == gpus and run["threads"] == cpus
        assert (math.isnan(run["time_s"]) and seconds == 0) or run["time_s"] == seconds
        assert run["status"] == status[state] or (seconds == 0 and run["status"] == "no-timing")


@SETTINGS
@given(rows=st.lists(st.tuples(counts, times, st.sampled_from(["s", "ms", "min"])), min_size=1, max_size=6))
def test_reframe_round_trip(rows: list[tuple[int, float, str]]) -> None:
    header = "result|job_completion_time|name|num_tasks|t_value|t_unit|t_ref|t_lower_thres|t_upper_thres"
    lines = [header] + [f"pass|2024-01-01T00:00:00|app %num_tasks={n}|{n}|{t!r}|{unit}|0|None|None" for n, t, unit in rows]
    result = _read({"perflogs/sys/part/App.log": "\n".join(lines) + "\n"})
    assert list(result.runs["resources"]) == [n for n, _t, _u in rows]
    per = {"s": 1, "ms": 1e-3, "min": 60}
    for (_n, t, unit), value in zip(rows, result.runs["time_s"]):
        assert math.isclose(value, t * per[unit])


@SETTINGS
@given(rows=st.lists(st.tuples(counts, st.one_of(st.none(), times)), min_size=1, max_size=8), as_json=st.booleans())
def test_table_round_trip(rows: list[tuple[int, float | None]], as_json: bool) -> None:
    if as_json:
        files = {"t.json": json.dumps([{"gpus": n, "time_s": t} for n, t in rows])}
    else:
        files = {"t.csv": "gpus,time_s\n" + "".join(f"{n},{'' if t is None else repr(t)}\n" for n, t in rows)}
    result = _read(files)
    assert list(result.runs["resources"]) == [n for n, _t in rows]
    for (_n, t), value, status in zip(rows, result.runs["time_s"], result.runs["status"]):
        assert (t is None and math.isnan(value) and status == "no-timing") or value == t


MARKERS = ["", ":::MLLOG ", "JobID|JobName|Elapsed\n", "result|job_completion_time|name\n", "Total training time: ", "Total Training Time: ",
           "BENCHMARK RESULTS SUMMARY\n", "SLURM_NTASKS=", "Train Epoch: 1 [", "[", "{", "gpus,time\n", "2022|reframe 3|x|jobid=1|a=", "#SBATCH -c "]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker=st.sampled_from(MARKERS), body=st.text(max_size=400), name=st.sampled_from(["x.out", "x.csv", "x.json", "log.mnist-3", "results/s/b/result_0.txt", "x.sh"]))
def test_arbitrary_text_never_raises(marker: str, body: str, name: str) -> None:
    text = marker + body
    result = _read({name: text.encode("utf-8", errors="replace"), "job.sh": "#SBATCH " + body[:80] + "\n"})
    result2 = read_runs([])
    assert result2.runs.empty
    for column in ("resources", "nodes", "gpus", "threads", "processes"):
        assert (result.runs[column].dropna() >= 1).all()


@settings(max_examples=60, deadline=None)
@given(pattern=st.text(max_size=30))
def test_any_resources_pattern_never_raises(pattern: str) -> None:
    result = _read({"threads-2/log.out": "Total Training Time: 3.5 s\n"}, resources_pattern=pattern)
    assert len(result.runs) == 1
