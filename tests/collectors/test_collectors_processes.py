"""ProcessCollector on fake /proc trees (odd comm names, kernel threads, zombies, processes
that vanish or deny access mid-scan, garbled stat, CPU % with a fake clock) and on this
machine's real /proc (the test process itself, and a busy child)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from os_cpu import mark, percent_bounds
from gpuscope.collectors import procfs
from gpuscope.collectors.processes import ProcessCollector

UPTIME = 1000.0


def stat_line(pid: int, comm: str, *, state: str = "S", ppid: int = 1, utime: int = 0, stime: int = 0, threads: int = 1, start: int = 5000, rss: int = 10, cpu: int = 3) -> str:
    """A proc(5) stat line: fields 3.. after the comm; field 39 is the last CPU."""
    fields = [state, ppid, pid, pid, 0, -1, 4194304, 0, 0, 0, 0, utime, stime, 0, 0, 20, 0, threads, 0, start, 1 << 20, rss]
    fields += [0] * 13 + [17, cpu, 0, 0, 0, 0, 0]
    return f"{pid} ({comm}) " + " ".join(map(str, fields)) + "\n"


def add_process(root: Path, pid: int, comm: str = "worker", cmdline: bytes | None = None, **stat: int | str) -> Path:
    folder = root / "proc" / str(pid)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stat").write_text(stat_line(pid, comm, **stat))  # type: ignore[arg-type]
    (folder / "cmdline").write_bytes(cmdline if cmdline is not None else f"/usr/bin/{comm}\0--flag\0".encode())
    return folder


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "uptime").write_text(f"{UPTIME} 1500.00\n")
    for name in ("self", "sys", "meminfo", "1x"):
        (tmp_path / "proc" / name).mkdir()
    add_process(tmp_path, 1, "init", b"/sbin/init\0splash\0", ppid=0)
    return tmp_path


def by_pid(rows) -> dict:
    return {row.pid: row for row in rows}


def test_normal_process(tree: Path) -> None:
    add_process(tree, 4242, "python3", b"python3\0train.py\0--epochs\x0010\0", state="R", ppid=1, utime=70, stime=30, threads=9, start=40_000, rss=2560, cpu=5)
    procs = ProcessCollector(tree)
    rows = procs.sample()
    assert [r.pid for r in rows] == [1, 4242]  # non-numeric entries ignored, pid order
    row = rows[1]
    assert (row.pid, row.ppid, row.state, row.threads, row.cpu_id) == (4242, 1, "R", 9, 5)
    assert row.command == "python3 train.py --epochs 10"
    assert row.rss == 2560 * procs.page_size
    assert row.started == pytest.approx(40_000 / procs.clock_ticks)
    assert row.uid == os.stat(tree / "proc" / "4242").st_uid
    assert row.user == pwd.getpwuid(row.uid).pw_name
    assert row.cpu_percent is None  # first sight


def test_kernel_thread_and_zombie_show_comm_in_brackets(tree: Path) -> None:
    add_process(tree, 2, "kthreadd", b"", ppid=0, rss=0)
    add_process(tree, 77, "kworker/0:1H-kblockd", b"", ppid=2, state="I", rss=0)
    add_process(tree, 90, "defunct-child", b"", ppid=1, state="Z", rss=0, threads=1)
    rows = by_pid(ProcessCollector(tree).sample())
    assert rows[2].command == "[kthreadd]"
    assert rows[77].command == "[kworker/0:1H-kblockd]" and rows[77].state == "I"
    assert rows[90].command == "[defunct-child] <defunct>" and rows[90].state == "Z" and rows[90].rss == 0


def test_comm_with_parentheses_spaces_and_newline(tree: Path) -> None:
    add_process(tree, 300, "evil) (S 1 2\nname)", b"", ppid=77, state="D", threads=4, rss=8)
    row = by_pid(ProcessCollector(tree).sample())[300]
    assert (row.ppid, row.state, row.threads) == (77, "D", 4)
    assert row.command == "[evil) (S 1 2 name)]"


def test_markup_survives_as_text_and_escapes_are_removed(tree: Path) -> None:
    add_process(tree, 10, "x", b"python\0[bold]big[/]\0\x1b[31mred\x1b[0m\0")
    add_process(tree, 11, "[bold]k\x1b[31m[/]", b"")
    rows = by_pid(ProcessCollector(tree).sample())
    assert rows[10].command == "python [bold]big[/] red"
    assert rows[11].command == "[[bold]k[/]]"


def test_trailing_nuls_long_cmdline_and_bad_utf8(tree: Path) -> None:
    add_process(tree, 20, "java", b"java\0-cp\0" + b"a" * 10_000 + b"\0\0\0")
    add_process(tree, 21, "odd", b"caf\xe9\0\0")
    rows = by_pid(ProcessCollector(tree, cmdline_limit=100).sample())
    assert rows[20].command.startswith("java -cp aaa") and len(rows[20].command) == 100
    assert rows[21].command == "caf\ufffd"


def test_process_that_vanishes_mid_scan_is_skipped(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for pid in (50, 51, 52):
        add_process(tree, pid)
    real = procfs.read_bytes

    def vanishing(path: str, limit: int = 1 << 20) -> bytes:
        # 50 exits after listdir, before its stat is read; 51 between stat and cmdline.
        if path.endswith("/50/stat") or path.endswith("/51/cmdline"):
            shutil.rmtree(Path(path).parent)
        return real(path, limit)

    monkeypatch.setattr(procfs, "read_bytes", vanishing)
    assert [r.pid for r in ProcessCollector(tree).sample()] == [1, 52]


def test_exited_process_read_gives_esrch(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_process(tree, 60)
    real = procfs.read_bytes

    def esrch(path: str, limit: int = 1 << 20) -> bytes:
        if "/60/" in path:
            raise ProcessLookupError(3, "No such process")
        return real(path, limit)

    monkeypatch.setattr(procfs, "read_bytes", esrch)
    assert [r.pid for r in ProcessCollector(tree).sample()] == [1]


def test_permission_denied(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    add_process(tree, 70, "secret")
    add_process(tree, 71, "private")
    real = procfs.read_bytes

    def denying(path: str, limit: int = 1 << 20) -> bytes:
        if path.endswith("/70/stat") or path.endswith("/71/cmdline"):
            raise PermissionError(13, "Permission denied", path)
        return real(path, limit)

    monkeypatch.setattr(procfs, "read_bytes", denying)
    rows = by_pid(ProcessCollector(tree).sample())
    assert 70 not in rows  # no stat: nothing to show
    assert rows[71].command == "private"  # hidden cmdline: comm, without kernel-thread brackets


def test_garbled_stat_skips_only_that_process(tree: Path) -> None:
    for pid, text in {30: "30 no parens S 1 2\n", 31: "31 (short) S 1\n", 32: "32 (nan) S x y z" + " 0" * 40 + "\n", 33: "", 34: "34 (a) \xff\xfe 1 1" + " 0" * 40}.items():
        folder = add_process(tree, pid)
        (folder / "stat").write_text(text, errors="surrogateescape")
    (tree / "proc" / "35").write_text("a file, not a folder")
    add_process(tree, 36, "fine")
    assert [r.pid for r in ProcessCollector(tree).sample()] == [1, 36]


def test_cpu_percent_across_two_samples_with_a_fake_clock(tree: Path) -> None:
    now = [100.0]
    add_process(tree, 40, utime=1000, stime=500, start=7000)
    add_process(tree, 41, utime=10, start=7100)
    procs = ProcessCollector(tree, clock=lambda: now[0])
    hz = procs.clock_ticks
    assert all(r.cpu_percent is None for r in procs.sample())

    now[0] = 102.0
    add_process(tree, 40, utime=1000 + hz, stime=500 + hz // 2, start=7000)  # 1.5 s CPU in 2 s
    add_process(tree, 41, utime=10, start=7200)  # pid reused: new start time
    add_process(tree, 42, utime=5)  # new process
    rows = by_pid(procs.sample())
    assert rows[40].cpu_percent == pytest.approx(75.0)
    assert rows[1].cpu_percent == 0.0
    assert rows[41].cpu_percent is None and rows[42].cpu_percent is None

    now[0] = 103.0  # multithreaded: more than one core's worth
    add_process(tree, 42, utime=5 + 3 * hz)
    assert by_pid(procs.sample())[42].cpu_percent == pytest.approx(300.0)


def test_same_clock_reading_gives_none_not_a_division_by_zero(tree: Path) -> None:
    procs = ProcessCollector(tree, clock=lambda: 5.0)
    procs.sample()
    assert procs.sample()[0].cpu_percent is None


def test_pids_argument_restricts_the_scan(tree: Path) -> None:
    for pid in (100, 101, 102):
        add_process(tree, pid)
    procs = ProcessCollector(tree)
    assert [r.pid for r in procs.sample([102, 100, 100, 999_999])] == [100, 102]
    assert procs.sample([]) == ()


def test_descendants_follow_ppid_links(tree: Path) -> None:
    add_process(tree, 10, ppid=1)
    add_process(tree, 11, ppid=10)
    add_process(tree, 12, ppid=10)
    add_process(tree, 13, ppid=11)
    add_process(tree, 20, ppid=1)
    (tree / "proc" / "14").mkdir()  # vanished: no stat
    procs = ProcessCollector(tree)
    assert procs.descendants(10) == {11, 12, 13}
    assert procs.descendants(13) == set()
    assert procs.descendants(1) == {10, 11, 12, 13, 20}
    assert procs.descendants(424242) == set()


def test_uid_from_folder_owner_and_unknown_uid_as_number(tree: Path) -> None:
    procs = ProcessCollector(tree)
    unknown = next(uid for uid in range(3_999_000, 4_000_000) if not _has_user(uid))
    assert procs.user_name(unknown) == str(unknown)
    if os.geteuid() != 0:
        pytest.skip("chown needs root")
    os.chown(add_process(tree, 80), unknown, unknown)
    row = by_pid(procs.sample())[80]
    assert (row.uid, row.user) == (unknown, str(unknown))


def _has_user(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def test_uptime_falls_back_to_btime_then_none(tree: Path) -> None:
    proc = str(tree / "proc")
    assert procfs.uptime(proc) == UPTIME
    (tree / "proc" / "uptime").unlink()
    (tree / "proc" / "stat").write_text(f"cpu  1 1 1 1\nbtime {int(time.time()) - 500}\n")
    assert procfs.uptime(proc) == pytest.approx(500, abs=2)
    (tree / "proc" / "stat").unlink()
    assert procfs.uptime(proc) is None


def test_an_idle_process_keeps_its_row_object_a_busy_one_gets_a_new_one(tree: Path) -> None:
    """Rows are frozen: an idle process's row (same stat, 0 % again) is reused as it is."""
    now = [100.0]
    add_process(tree, 40, "idle", utime=5)
    add_process(tree, 41, "busy", utime=5)
    collector = ProcessCollector(tree, clock=lambda: now[0])
    first = by_pid(collector.sample())
    now[0] += 1.0
    second = by_pid(collector.sample())
    assert second[40].cpu_percent == 0.0 and second[40] is not first[40]  # None -> 0 %: new
    add_process(tree, 41, "busy", utime=105)  # one second of CPU
    now[0] += 1.0
    third = by_pid(collector.sample())
    assert third[40] is second[40]
    assert third[41] is not second[41] and third[41].cpu_percent == pytest.approx(100.0)
    assert third[40].started == pytest.approx(5000 / collector.clock_ticks)


def test_missing_proc_folder(tmp_path: Path) -> None:
    procs = ProcessCollector(tmp_path / "nowhere")
    assert procs.sample() == () and procs.descendants(1) == set()


def test_collectors_never_load_textual() -> None:
    code = "import sys, gpuscope.collectors.processes, gpuscope.collectors.host; print(any(m.split('.')[0] == 'textual' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_real_proc_this_process_and_a_busy_child() -> None:
    procs = ProcessCollector()
    me = by_pid(procs.sample()).get(os.getpid())
    assert me is not None
    assert (me.ppid, me.uid, me.state) == (os.getppid(), os.geteuid(), "R")
    assert me.rss > 0 and me.threads >= 1 and me.started > 0
    assert "pytest" in me.command or sys.executable in me.command or "python" in me.command

    child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.1)
        assert procs.descendants(os.getpid()) >= {child.pid}
        m0 = mark(child.pid)
        first = procs.sample([child.pid])
        m1 = mark(child.pid)
        assert len(first) == 1 and first[0].cpu_percent is None and first[0].ppid == os.getpid()
        time.sleep(0.5)
        m2 = mark(child.pid)
        second = procs.sample([child.pid])
        m3 = mark(child.pid)
        low, high = percent_bounds(m0, m1, m2, m3)  # what the kernel recorded around the pair
        assert second[0].cpu_percent is not None and low <= second[0].cpu_percent <= high, (low, second, high)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert procs.sample([child.pid]) == ()


def test_command_lines_are_cached_per_process_and_refreshed(tree: Path) -> None:
    """One read per process per tick: cmdline is re-read after IDENTITY_REFRESH_S once the
    process has run (its stat changed), after IDLE_IDENTITY_REFRESH_S when it has not, or at
    once when the pid now belongs to another process (new start time)."""
    from gpuscope.collectors.processes import IDENTITY_REFRESH_S, IDLE_IDENTITY_REFRESH_S

    now = [100.0]
    add_process(tree, 4242, "app", b"app --old\0", start=7000)
    collector = ProcessCollector(tree, clock=lambda: now[0])
    assert by_pid(collector.sample())[4242].command == "app --old"
    (tree / "proc" / "4242" / "cmdline").write_bytes(b"app --retitled\0")
    now[0] += IDENTITY_REFRESH_S
    assert by_pid(collector.sample())[4242].command == "app --old"  # has not run: still cached
    add_process(tree, 4242, "app", b"app --retitled\0", start=7000, utime=3)  # it ran
    now[0] += 1.0
    assert by_pid(collector.sample())[4242].command == "app --retitled"
    (tree / "proc" / "4242" / "cmdline").write_bytes(b"app --third\0")
    now[0] += IDLE_IDENTITY_REFRESH_S
    assert by_pid(collector.sample())[4242].command == "app --third"  # idle, but a minute passed
    add_process(tree, 4242, "other", b"other\0", start=9000)  # pid reused
    now[0] += 1.0
    assert by_pid(collector.sample())[4242].command == "other"


# --- schedstat: a process that has not run is not read again ---------------------------------


def with_schedstat(root: Path, pid: int | str, text: str) -> None:
    (root / "proc" / str(pid) / "schedstat").write_text(text)


@pytest.fixture
def sched_tree(tree: Path) -> Path:
    """A fake /proc whose kernel keeps scheduler statistics (this process has run)."""
    with_schedstat(tree, "self", "123456 789 10\n")
    with_schedstat(tree, 1, "5000 0 3\n")
    return tree


def test_without_schedstat_every_stat_is_read(tree: Path) -> None:
    assert ProcessCollector(tree)._schedstat is False  # the fake tree of the other tests
    with_schedstat(tree, "self", "0 0 0\n")  # a kernel with scheduler statistics off
    assert ProcessCollector(tree)._schedstat is False


def test_a_process_that_has_not_run_keeps_its_row_until_the_stat_refresh(sched_tree: Path) -> None:
    from gpuscope.collectors.processes import IDLE_STAT_REFRESH_S

    now = [100.0]
    add_process(sched_tree, 40, "idle", utime=5, rss=10)
    with_schedstat(sched_tree, 40, "900 0 2\n")
    collector = ProcessCollector(sched_tree, clock=lambda: now[0])
    assert collector._schedstat is True
    collector.sample()
    now[0] += 1.0
    idle = by_pid(collector.sample())[40]
    assert idle.cpu_percent == 0.0
    # Its stat changes but its schedstat does not: not read, the row is the same object.
    add_process(sched_tree, 40, "idle", utime=5, rss=99)
    now[0] += 1.0
    assert by_pid(collector.sample())[40] is idle
    # Until IDLE_STAT_REFRESH_S after the stat was last read: then the new RSS shows.
    now[0] += IDLE_STAT_REFRESH_S
    assert by_pid(collector.sample())[40].rss == 99 * collector.page_size


def test_a_process_that_ran_is_read_and_its_cpu_covers_only_the_last_interval(sched_tree: Path) -> None:
    now = [100.0]
    add_process(sched_tree, 41, "worker", utime=100)
    with_schedstat(sched_tree, 41, "900 0 2\n")
    collector = ProcessCollector(sched_tree, clock=lambda: now[0])
    for _ in range(4):  # idle for three seconds: rows come from the schedstat check
        collector.sample()
        now[0] += 1.0
    add_process(sched_tree, 41, "worker", utime=150)  # then half a core for one second
    with_schedstat(sched_tree, 41, "500000900 0 9\n")
    row = by_pid(collector.sample())[41]
    assert row.cpu_percent == pytest.approx(50.0)  # over 1 s, not over the 4 s since the stat read


def test_a_process_with_threads_or_not_run_yet_has_its_stat_read_every_scan(sched_tree: Path) -> None:
    """schedstat counts the main thread only: its other threads may run while it sleeps."""
    now = [100.0]
    add_process(sched_tree, 42, "threaded", utime=100, threads=8)
    with_schedstat(sched_tree, 42, "900 0 2\n")
    add_process(sched_tree, 43, "new", utime=0)
    with_schedstat(sched_tree, 43, "0 0 0\n")
    collector = ProcessCollector(sched_tree, clock=lambda: now[0])
    collector.sample()
    now[0] += 1.0
    collector.sample()
    add_process(sched_tree, 42, "threaded", utime=300, threads=8)  # two cores busy, main thread asleep
    add_process(sched_tree, 43, "new", utime=100)
    now[0] += 1.0
    rows = by_pid(collector.sample())
    assert rows[42].cpu_percent == pytest.approx(200.0)
    assert rows[43].cpu_percent == pytest.approx(100.0)


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="needs a Linux /proc with schedstat")
def test_real_proc_a_process_busy_in_a_thread_while_its_main_thread_sleeps() -> None:
    code = "import threading\ndef spin():\n    while True: pass\nt = threading.Thread(target=spin); t.start(); print(flush=True); t.join()"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; print(flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
    try:
        # Both started before the first sample: with every core busy an interpreter's start-up
        # takes seconds, and a sleeper still importing is not asleep yet.
        for proc in (child, sleeper):
            assert proc.stdout is not None and proc.stdout.readline() == b"\n"
        procs = ProcessCollector()
        assert procs._schedstat is True
        time.sleep(0.3)
        rows, marks = [], []
        for _ in range(4):  # the sleeper's row comes from the schedstat check by the third
            before = mark(child.pid)
            rows.append(by_pid(procs.sample([child.pid, sleeper.pid])))
            marks.append((before, mark(child.pid)))
            time.sleep(0.3)
        low, high = percent_bounds(*marks[-2], *marks[-1])  # what the kernel recorded around the last pair
        assert low <= rows[-1][child.pid].cpu_percent <= high, (low, rows[-1][child.pid], high)
        assert rows[-1][sleeper.pid].cpu_percent == 0.0 and rows[-1][sleeper.pid] is rows[-2][sleeper.pid]
    finally:
        for proc in (child, sleeper):
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


# --- /proc is listed again only when a pid was handed out --------------------------------------


def set_last_pid(root: Path, last: int) -> None:
    (root / "proc" / "loadavg").write_text(f"0.10 0.20 0.30 1/120 {last}\n")


def test_proc_is_listed_again_when_a_pid_was_handed_out_or_after_a_while(tree: Path) -> None:
    from gpuscope.collectors.processes import LIST_REFRESH_S

    now = [100.0]
    set_last_pid(tree, 500)
    add_process(tree, 40)
    collector = ProcessCollector(tree, clock=lambda: now[0])
    assert [r.pid for r in collector.sample()] == [1, 40]
    add_process(tree, 41)  # a folder appears, but the kernel's last pid says nothing started
    now[0] += 1.0
    assert [r.pid for r in collector.sample()] == [1, 40]
    collector.sample([40])  # a scope's scan in between does not shrink the list
    now[0] += 1.0
    assert [r.pid for r in collector.sample()] == [1, 40]
    set_last_pid(tree, 501)
    now[0] += 1.0
    assert [r.pid for r in collector.sample()] == [1, 40, 41]
    add_process(tree, 42)
    now[0] += LIST_REFRESH_S
    assert [r.pid for r in collector.sample()] == [1, 40, 41, 42]


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="needs a Linux /proc")
def test_real_proc_a_new_process_is_seen_at_the_next_scan_and_an_exited_one_goes() -> None:
    """Exiting hands out no pid: the list is reused, and the exited process's held
    schedstat fails (ESRCH), so it drops out (a fake /proc's deleted file would not fail)."""
    procs = ProcessCollector()
    procs.sample()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert child.pid in by_pid(procs.sample())
    finally:
        child.kill()
        child.wait()
    assert child.pid not in by_pid(procs.sample())
