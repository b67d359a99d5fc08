"""One prepared check of the NVML collector on a machine with a real NVIDIA GPU.

Run it where a GPU is lent (it is not a unit test: CI has no GPU):

    python bench/gpu_check.py [--out DIR] [--seconds 20]

What it does, in order:
1. idle: every field of `NvmlBackend.sample()` beside `nvidia-smi --query-gpu` read at once;
2. busy: starts a real CUDA workload (PyTorch matrix products on a 4 GiB allocation) in a
   child process, then compares again, and compares the child's row against
   `nvidia-smi --query-compute-apps=pid,used_memory`;
3. runs `gpuscope watch --once --format json --pid CHILD` and checks the child is in its
   scope with its GPU memory and the GPU's utilisation;
4. times `sample()` (median of 50 calls);
5. if Textual is importable, opens the watch screen headless over the real source and saves
   an SVG screenshot;
6. energy and activity: idle SM activity (< 5 %); an fp32 matmul without TF32 (SM active
   > 80 %, tensor active 0); an fp16 matmul for `--energy-seconds` (tensor active > 0, and the
   energy counter's delta within 2 % of the power integrated over the same samples), each
   beside `nvidia-smi --query-gpu=power.draw,clocks.sm,clocks.max.sm` and `nvidia-smi dmon
   --gpm-metrics` printed as it is (its metric numbers: see `nvidia-smi dmon -h`).

It prints one line per comparison (`ok` / `DIFF`) and writes gpu_check.json (and the SVG) to
--out (default $OUT, else the current folder). Exit 0 when every comparison is within its
tolerance, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time

from gpuscope.collectors.nvml import NVIDIA_SMI_EQUIVALENTS, NvmlBackend, decode_throttle_reasons

MIB = 1024 * 1024
# How far apart two reads taken a few ms apart may be, per field (absolute, in smi's units).
TOLERANCE = {"memory_used": 64, "memory_total": 0, "temperature_c": 3, "power_w": 40, "power_limit_w": 1,
             "sm_clock_mhz": 150, "memory_clock_mhz": 50, "util_gpu": 30, "util_memory": 30}
WORKLOAD = """
import sys, time, torch
x = torch.empty(int(4 * 2**30) // 4, dtype=torch.float32, device="cuda")  # 4 GiB held
a = torch.randn(8192, 8192, device="cuda"); b = torch.randn(8192, 8192, device="cuda")
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20):
        a = (a @ b) * 1e-4
    torch.cuda.synchronize()
"""


def smi(query: str, kind: str = "--query-gpu") -> list[list[str]]:
    out = subprocess.run(["nvidia-smi", f"{kind}={query}", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=30, check=False).stdout
    return [[c.strip() for c in line.split(",")] for line in out.splitlines() if line.strip()]


def ours_in_smi_units(field: str, value):
    if value is None:
        return None
    if field in ("memory_used", "memory_total"):
        return value / MIB
    if field == "throttle_reasons":
        return sorted(value)
    return value


def compare(label: str, backend: NvmlBackend, results: list[dict]) -> None:
    fields = list(NVIDIA_SMI_EQUIVALENTS)
    ours = backend.sample()
    theirs = smi(",".join(NVIDIA_SMI_EQUIVALENTS[f] for f in fields))
    for gpu, row in zip(ours, theirs):
        for field, text in zip(fields, row):
            mine = ours_in_smi_units(field, getattr(gpu, field))
            if field == "throttle_reasons":
                other = sorted(decode_throttle_reasons(int(text, 16))) if text.startswith("0x") else text
                ok = mine == other
            elif field == "bus_id":
                other = text.lower()
                ok = str(mine).lower().endswith(other[-12:])  # smi pads the domain to 8 digits
            elif field in TOLERANCE:
                try:
                    other = float(text)
                except ValueError:
                    other = text  # "[N/A]" / "[Not Supported]": ours must be None then
                ok = (mine is None) if isinstance(other, str) else (mine is not None and abs(mine - other) <= TOLERANCE[field])
            else:
                other, ok = text, str(mine) == text
            results.append({"phase": label, "gpu": gpu.index, "field": field, "gpuscope": mine, "nvidia_smi": other, "ok": ok})
            print(f"{'ok  ' if ok else 'DIFF'} {label:5} gpu{gpu.index} {field:18} gpuscope={mine!r:<28} nvidia-smi={other!r}")


def process_rows(backend: NvmlBackend, pid: int, results: list[dict]) -> None:
    ours = {p.pid: p for g in backend.sample() for p in g.processes}
    theirs = {int(r[0]): float(r[1]) for r in smi("pid,used_memory", "--query-compute-apps") if r[0].isdigit()}
    mine = ours.get(pid)
    ok = mine is not None and pid in theirs and mine.used_memory is not None and abs(mine.used_memory / MIB - theirs[pid]) <= 2
    results.append({"phase": "busy", "field": "process", "pid": pid, "gpuscope": None if mine is None else [mine.used_memory, mine.sm_percent, mine.kind],
                    "nvidia_smi": theirs.get(pid), "ok": ok})
    print(f"{'ok  ' if ok else 'DIFF'} busy  pid {pid}: gpuscope memory={None if mine is None else mine.used_memory / MIB} MiB "
          f"sm%={None if mine is None else mine.sm_percent} kind={None if mine is None else mine.kind}; nvidia-smi {theirs.get(pid)} MiB; all smi pids {sorted(theirs)}")


def watch_once(pid: int, results: list[dict]) -> None:
    out = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "watch", "--once", "--format", "json", "--pid", str(pid)],
                         capture_output=True, text=True, timeout=60, check=False)
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError:
        results.append({"phase": "watch", "ok": False, "stderr": out.stderr[-2000:]})
        print("DIFF watch --once gave no JSON:", out.stderr[-2000:])
        return
    row = next((p for p in data["processes"] if p["pid"] == pid), None)
    util = [g["util_gpu"] for g in data["gpus"]]
    ok = out.returncode == 0 and row is not None and (row.get("gpu_memory") or 0) > 4 * 2**30 and pid in data["scope"]["pids"]
    results.append({"phase": "watch", "ok": ok, "row": row, "util_gpu": util, "verdicts": data.get("verdicts"), "status": data.get("gpu_status")})
    print(f"{'ok  ' if ok else 'DIFF'} watch --once --pid {pid}: row={row and {k: row.get(k) for k in ('pid', 'gpu_memory', 'gpu_sm_percent', 'gpu_indices', 'command')}} util={util}")
    print("     verdicts:", [v.get("text") for v in data.get("verdicts", [])])


MATMUL = """
import sys, time, torch
dtype = getattr(torch, sys.argv[2])
torch.backends.cuda.matmul.allow_tf32 = False  # fp32 without TF32: no tensor-core work
a = torch.randn(8192, 8192, device="cuda", dtype=dtype); b = torch.randn(8192, 8192, device="cuda", dtype=dtype)
print("ready", flush=True)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(10):
        c = a @ b
    torch.cuda.synchronize()
"""


def readings(backend: NvmlBackend, seconds: float) -> list:
    """GPU 0's samples once a second for `seconds` (GPM needs > 0.1 s between samples)."""
    out = []
    end = time.time() + seconds
    while time.time() < end:
        out.append(backend.sample()[0])
        time.sleep(1.0)
    return out


def activity(samples: list) -> dict:
    def mean(field: str):
        values = [getattr(s, field) for s in samples if getattr(s, field) is not None]
        return statistics.fmean(values) if values else None
    return {f: mean(f) for f in ("util_gpu", "sm_active_pct", "tensor_active_pct", "dram_bw_pct", "power_w")}


def smi_reference(label: str) -> None:
    print(f"     {label} nvidia-smi:", smi("power.draw,clocks.sm,clocks.max.sm"))
    dmon = subprocess.run(["nvidia-smi", "dmon", "--gpm-metrics", "2,3,5,10", "-c", "2", "-i", "0"],
                          capture_output=True, text=True, timeout=30, check=False)
    print("     " + (dmon.stdout or dmon.stderr).strip().replace("\n", "\n     "))


def check(results: list[dict], label: str, ok: bool, **figures) -> None:
    results.append({"phase": "energy", "check": label, "ok": ok, **figures})
    print(f"{'ok  ' if ok else 'DIFF'} {label}: {figures}")


def energy_and_activity(backend: NvmlBackend, results: list[dict], seconds: float) -> None:
    from gpuscope.metrics.energy import gpu_energy

    idle = activity(readings(backend, 3))
    check(results, "idle: SM active < 5 %", idle["sm_active_pct"] is not None and idle["sm_active_pct"] < 5, **idle)
    smi_reference("idle")
    for dtype, span in (("float32", 15.0), ("float16", seconds)):
        child = subprocess.Popen([sys.executable, "-c", MATMUL, str(span + 5), dtype], stdout=subprocess.PIPE, text=True)
        try:
            print("matmul", dtype, child.stdout.readline().strip() or "did not start")
            time.sleep(2)
            samples = readings(backend, span)
            smi_reference(dtype)
        finally:
            child.kill()
            child.wait()
        busy = activity(samples)
        check(results, f"{dtype} matmul: SM active > 80 %", busy["sm_active_pct"] is not None and busy["sm_active_pct"] > 80, **busy)
        if dtype == "float32":
            check(results, "fp32 without TF32: tensor active 0", busy["tensor_active_pct"] is not None and busy["tensor_active_pct"] < 1, **busy)
            continue
        check(results, "fp16 matmul: tensor active > 0", busy["tensor_active_pct"] is not None and busy["tensor_active_pct"] > 0, **busy)
        figure = gpu_energy([s.timestamp for s in samples], [s.energy_mj for s in samples], [s.power_w for s in samples])
        counter, power = figure.counter_j, figure.integrated_j
        close = counter is not None and power is not None and abs(counter - power) <= 0.02 * max(counter, power)
        check(results, f"energy counter within 2 % of integrated power over {span:.0f} s", close,
              counter_j=counter, integrated_j=power, notes=list(figure.notes))


def sample_cost(backend: NvmlBackend) -> float:
    times = []
    for _ in range(50):
        t = time.perf_counter()
        backend.sample()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


async def screenshot(out_dir: str, seconds: float) -> str | None:
    try:
        from gpuscope.collectors.snapshot import SnapshotSource
        from gpuscope.tui.app import GpuscopeApp
        from gpuscope.tui.screens.watch.screen import WatchScreen
    except ImportError as err:
        print("no screenshot:", err)
        return None
    source = SnapshotSource()
    app = GpuscopeApp(first_screen=lambda: WatchScreen(source, interval=1.0, readonly=True))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(seconds)
        path = app.save_screenshot(filename="gpu_check_watch.svg", path=out_dir)
    source.close()
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "."))
    parser.add_argument("--seconds", type=float, default=25.0, help="how long the CUDA workload runs")
    parser.add_argument("--energy-seconds", type=float, default=60.0, help="how long the fp16 matmul of the energy check runs")
    args = parser.parse_args()
    results: list[dict] = []
    print(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=False).stdout)
    backend = NvmlBackend()
    print("start:", backend.start() or "ok", backend.status())
    compare("idle", backend, results)
    child = subprocess.Popen([sys.executable, "-c", WORKLOAD, str(args.seconds)], stdout=subprocess.PIPE, text=True)
    try:
        ready = child.stdout.readline().strip()
        print("workload:", ready or "did not start", "pid", child.pid)
        time.sleep(4)
        backend.sample()  # opens the per-process SM % window
        time.sleep(2)
        compare("busy", backend, results)
        process_rows(backend, child.pid, results)
        watch_once(child.pid, results)
        cost = sample_cost(backend)
        print(f"sample() median {cost:.2f} ms over 50 calls")
        results.append({"phase": "cost", "sample_ms_median": cost, "ok": True})
        try:
            print("screenshot:", asyncio.run(screenshot(args.out, 4)))
        except Exception as err:  # noqa: BLE001 - the comparisons above are the point; report and go on
            print("screenshot failed:", repr(err))
    finally:
        child.kill()
        child.wait()
    energy_and_activity(backend, results, args.energy_seconds)
    backend.close()
    with open(os.path.join(args.out, "gpu_check.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    bad = [r for r in results if not r["ok"]]
    print(f"{len(results) - len(bad)} ok, {len(bad)} differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
