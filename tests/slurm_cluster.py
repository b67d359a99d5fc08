"""A real single-node Slurm cluster for tests (CI runs them as root on Debian).

Use it from a test module with `from slurm_cluster import slurm_cluster  # noqa: F401`; it
yields a `SlurmCluster` with `submit(cmd, cpus, mem) -> job_id`, `wait_running(job_id)`,
`cancel(job_id)`, `run(*argv)` and `env` (SLURM_CONF, also set in os.environ for the session so
gpuscope's own scontrol calls find the cluster).

Setup: installs `slurm-wlm` and `munge` with apt-get when slurmctld is missing, writes a
slurm.conf and cgroup.conf into a temporary folder (free ports, so a system Slurm on the same
host is left alone), starts munged (unless one already answers), slurmctld and slurmd in the
foreground as our children and waits for the node to be idle. Teardown cancels the jobs it submitted and
stops exactly the daemons it started, by their pids. Tests are skipped, with the reason, when
GPUSCOPE_SKIP_SLURM=1, when not root, or when the packages cannot be installed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Callable, Iterator

import pytest

from apt_packages import apt_install

SBIN_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
MUNGE_SOCKET = Path("/run/munge/munge.socket.2")
ACTIVE_STATES = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED")
_shared: dict[str, object] = {"cluster": None, "users": 0}
"""One cluster per session even when several test modules import the fixture."""


def _which(name: str) -> str | None:
    return shutil.which(name, path=SBIN_PATH)


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _install() -> str | None:
    """apt-get the packages; None on success, else why not (the tests are then skipped)."""
    why = apt_install(["slurm-wlm", "munge"])
    if why is None and not (_which("slurmctld") and _which("slurmd") and _which("munged")):
        why = "apt-get ran but slurmctld/slurmd/munged are still missing"
    return why


class SlurmCluster:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.host = socket.gethostname().split(".")[0]  # what slurmd calls itself (hostname -s)
        self.conf = folder / "slurm.conf"
        self.env = {**os.environ, "SLURM_CONF": str(self.conf), "LC_ALL": "C", "PATH": SBIN_PATH}
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}
        self.submitted: list[str] = []
        self._logs: list[IO[bytes]] = []

    def run(self, *argv: str, timeout: float = 20, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A Slurm command against this cluster (argument list, no shell, with a timeout)."""
        done = subprocess.run(list(argv), env=self.env, capture_output=True, text=True, timeout=timeout, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} -> {done.returncode}: {done.stderr.strip()}")
        return done

    def write_conf(self) -> None:
        cpus = len(os.sched_getaffinity(0))  # nproc: what this process may use
        mem_mb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal:"))) // 1024
        real_mb = max(1024, mem_mb - max(512, mem_mb // 20))  # below the real size, or slurmd drains the node
        for sub in ("state", "spool", "log"):
            (self.folder / sub).mkdir(exist_ok=True)
        f = self.folder
        self.conf.write_text("\n".join([
            "ClusterName=gpuscope",
            f"SlurmctldHost={self.host}(127.0.0.1)",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            f"StateSaveLocation={f}/state",
            f"SlurmdSpoolDir={f}/spool",
            f"SlurmctldPidFile={f}/slurmctld.pid",
            f"SlurmdPidFile={f}/slurmd.pid",
            f"SlurmctldLogFile={f}/log/slurmctld.log",
            f"SlurmdLogFile={f}/log/slurmd.log",
            "ProctrackType=proctrack/linuxproc",  # no cgroup setup needed: works in containers
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/linux",  # sstat: a running step's CPU time and memory (gpuscope report --job)
            "JobAcctGatherFrequency=task=1",
            "AccountingStorageType=accounting_storage/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "MpiDefault=none",  # Debian's default pmix plugin logs errors without libpmix
            "SwitchType=switch/none",
            "ReturnToService=2",
            "KillWait=2",  # scancel -> SIGKILL after 2 s instead of 30: fast teardown
            "SlurmdTimeout=60",
            f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={real_mb} State=UNKNOWN",
            "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))
        # slurmd initialises the cgroup plugin even with proctrack/linuxproc + task/none; on a
        # cgroup v2 host without systemd (a container) that fails on D-Bus unless told not to
        # use it. `CgroupPlugin=disabled` only exists from 24.05.
        version = re.search(r"(\d+)\.(\d+)", self.run(str(_which("slurmd")), "-V", check=False).stdout)
        modern = version is not None and (int(version.group(1)), int(version.group(2))) >= (24, 5)
        (self.folder / "cgroup.conf").write_text("CgroupPlugin=disabled\n" if modern else "CgroupPlugin=autodetect\nIgnoreSystemd=yes\n")

    def _spawn(self, name: str, argv: list[str], **kwargs: object) -> None:
        log = open(self.folder / "log" / f"{name}.out", "wb")  # closed in stop()
        self._logs.append(log)
        self.daemons[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env, start_new_session=True, **kwargs)  # type: ignore[call-overload]

    def _munge_works(self) -> bool:
        munge, unmunge = _which("munge"), _which("unmunge")
        if not (munge and unmunge):
            return False
        cred = subprocess.run([munge, "-n"], capture_output=True, timeout=10, check=False)
        return cred.returncode == 0 and subprocess.run([unmunge], input=cred.stdout, capture_output=True, timeout=10, check=False).returncode == 0

    def start_munge(self) -> None:
        if self._munge_works():
            return  # a munged (systemd's, or another session's) already answers: use it
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            mungekey = _which("mungekey")
            if mungekey:
                subprocess.run([mungekey, "--create", f"--keyfile={key}"], check=True, timeout=30)
            else:
                key.write_bytes(os.urandom(1024))
            shutil.chown(key, "munge", "munge")
            key.chmod(0o400)
        MUNGE_SOCKET.parent.mkdir(parents=True, exist_ok=True)
        shutil.chown(MUNGE_SOCKET.parent, "munge", "munge")
        MUNGE_SOCKET.parent.chmod(0o755)
        # munged refuses to run as root with a munge-owned seed dir: run it as its own user.
        self._spawn("munged", [str(_which("munged")), "--foreground"], user="munge", group="munge")
        self._wait("munged", self._munge_works, 15, self.folder / "log" / "munged.out")

    def start(self) -> None:
        self.write_conf()
        self.start_munge()
        self._spawn("slurmctld", [str(_which("slurmctld")), "-D", "-f", str(self.conf)])
        self._spawn("slurmd", [str(_which("slurmd")), "-D", "-f", str(self.conf)])

        def idle() -> bool:
            out = self.run("sinfo", "-h", "-n", self.host, "-o", "%T", check=False, timeout=10).stdout.strip()
            return out.startswith("idle")

        self._wait("the node to become idle", idle, 45, self.folder / "log" / "slurmd.log", self.folder / "log" / "slurmctld.log")

    def _wait(self, what: str, ready: Callable[[], bool], timeout: float, *logs: Path) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            dead = [n for n, p in self.daemons.items() if p.poll() is not None]
            if dead:
                break
            time.sleep(0.2)
        details = "\n".join(f"--- {log.name}\n{_tail(log)}" for log in (*logs, *(self.folder / "log").glob("*.out")))
        raise RuntimeError(f"Slurm test cluster: gave up waiting for {what} (exited: {[n for n, p in self.daemons.items() if p.poll() is not None]})\n{details}")

    def submit(self, cmd: str, cpus: int = 1, mem: str = "100M") -> str:
        out = self.run("sbatch", "--parsable", "-c", str(cpus), f"--mem={mem}", f"--chdir={self.folder}", "-o", f"{self.folder}/slurm-%j.out", "--wrap", cmd).stdout
        job_id = out.strip().split(";")[0]
        self.submitted.append(job_id)
        return job_id

    def state(self, job_id: str) -> str:
        return self.run("squeue", "-h", "-j", job_id, "-o", "%T", check=False).stdout.strip()

    def wait_running(self, job_id: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            state = self.state(job_id)
            if state == "RUNNING":
                return
            if state not in ("PENDING", "CONFIGURING", ""):
                break
            time.sleep(0.2)
        raise AssertionError(f"job {job_id} is {state or 'gone'}, not RUNNING\n{_tail(self.folder / f'slurm-{job_id}.out')}\n{_tail(self.folder / 'log' / 'slurmctld.log')}")

    def cancel(self, job_id: str, timeout: float = 15) -> None:
        """scancel, then wait until the job no longer runs (squeue -j still lists a finished job,
        as COMPLETED or CANCELLED, until MinJobAge: that one is done, not worth waiting for)."""
        self.run("scancel", job_id, check=False)
        deadline = time.monotonic() + timeout
        while self.state(job_id) in ACTIVE_STATES and time.monotonic() < deadline:
            time.sleep(0.2)

    def stop(self) -> None:
        """Cancel our jobs, then stop what we started, newest first, by pid (TERM, then KILL)."""
        if self.daemons.get("slurmctld") and self.daemons["slurmctld"].poll() is None:
            for job_id in self.submitted:
                try:
                    self.cancel(job_id)
                except (OSError, subprocess.SubprocessError):
                    pass
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.daemons.get(name)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        for log in self._logs:
            log.close()


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlurmCluster]:
    if os.environ.get("GPUSCOPE_SKIP_SLURM") == "1":
        pytest.skip("GPUSCOPE_SKIP_SLURM=1")
    if os.geteuid() != 0:
        pytest.skip("a real Slurm test cluster needs root (to install packages and run slurmd)")
    if not (_which("slurmctld") and _which("slurmd") and _which("munged")):
        why = _install()
        if why:
            pytest.skip(f"cannot install Slurm: {why}")
    _shared["users"] = int(_shared["users"]) + 1  # type: ignore[call-overload]
    old_conf = os.environ.get("SLURM_CONF")
    try:
        if _shared["cluster"] is None:
            cluster = SlurmCluster(tmp_path_factory.mktemp("slurm"))
            _shared["cluster"] = cluster
            cluster.start()
        cluster = _shared["cluster"]  # type: ignore[assignment]
        os.environ["SLURM_CONF"] = str(cluster.conf)
        yield cluster
    finally:
        _shared["users"] = int(_shared["users"]) - 1  # type: ignore[call-overload]
        if _shared["users"] == 0 and _shared["cluster"] is not None:
            _shared["cluster"].stop()  # type: ignore[attr-defined]
            _shared["cluster"] = None
            if old_conf is None:
                os.environ.pop("SLURM_CONF", None)
            else:
                os.environ["SLURM_CONF"] = old_conf
