"""Records a real Slurm job into examples/recording/slurm-job.gsrec (see examples/recording/README.md).

    sudo .venv/bin/python tests/make_job_recording.py [OUT]

Starts the single-node Slurm of tests/slurm_cluster.py (root, slurm-wlm and munge installed),
submits a batch job asked for 2 CPUs, 240 MB and 5 minutes, and records it with
`gpuscope record --job ID --interval 0.5` until its processes are gone. The job's program
starts a child that keeps a core busy for 4 s and then ends, holds 200 MiB for 4 s and frees
it (the memory peak), then waits a few seconds. The cluster uses proctrack/linuxproc, so there
is no job cgroup: the recording's memory is the sum of the job's processes' RSS. A machine
without NVIDIA GPUs records no GPU. The daemons are stopped by pid at the end, whatever happens.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from slurm_cluster import SlurmCluster  # noqa: E402 - the tests' own cluster

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "recording" / "slurm-job.gsrec"
MARKER = "gpuscope-example-job"
# exec: the batch shell becomes python, so the job's main process is the program itself; it
# waits 3 s first so that `record` (started once the job runs) sees it from the start.
PROGRAM = f"""exec python3 -c '
import subprocess, sys, time  # {MARKER}
time.sleep(3)
child = subprocess.Popen([sys.executable, "-c", "import time\\nend = time.time() + 4\\nwhile time.time() < end: pass"])
time.sleep(1)
held = b"x" * (200 << 20)  # written, so resident
time.sleep(4)
del held                   # the peak ends here
child.wait()
time.sleep(4)
'"""


def _job_pids(cluster: SlurmCluster, job_id: str, timeout: float = 20) -> bool:
    """Whether `scontrol listpids` lists the job's program (RUNNING comes before slurmstepd starts it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = cluster.run("scontrol", "listpids", job_id, check=False).stdout.split()
        for pid in listed:
            try:
                if MARKER.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return True
            except OSError:
                continue
        time.sleep(0.1)
    return False


def main(out: Path = OUT) -> int:
    if out.exists():
        print(f"{out} exists: remove it first (a recording never overwrites a file)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="gpuscope-slurm-") as folder:
        cluster = SlurmCluster(Path(folder))
        try:
            cluster.start()
            job_id = cluster.run("sbatch", "--parsable", "-J", "example", "-c", "2", "--mem=240M", "--time=5", f"--chdir={folder}",
                                 "-o", f"{folder}/slurm-%j.out", "--wrap", PROGRAM).stdout.strip().split(";")[0]
            cluster.submitted.append(job_id)
            cluster.wait_running(job_id)
            if not _job_pids(cluster, job_id):
                print(f"job {job_id}: its program never appeared in scontrol listpids", file=sys.stderr)
                return 1
            done = subprocess.run([sys.executable, "-m", "gpuscope.tui.cli.main", "record", "--job", job_id, "--interval", "0.5",
                                   "--duration", "60", "-o", str(out)], env=cluster.env, capture_output=True, text=True, timeout=120, check=False)
            print(done.stdout + done.stderr, end="")
            return done.returncode
        finally:
            cluster.stop()


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
