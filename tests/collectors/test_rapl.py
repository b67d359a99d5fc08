"""read_rapl over fake /sys/class/powercap trees: a two-socket server, a VM without powercap, a
root-only node, odd contents; and the node's CPU energy from two readings with a wrap."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

import gpuscope.collectors.rapl as rapl
from gpuscope.collectors.rapl import read_rapl
from gpuscope.metrics.energy import rapl_energy

RANGE = 262_143_328_850  # max_energy_range_uj of a Xeon package


def _zone(root: Path, zone: str, name: str, energy: int | str, max_range: int = RANGE) -> None:
    d = root / zone
    d.mkdir(parents=True)
    (d / "name").write_text(name + "\n")
    (d / "energy_uj").write_text(f"{energy}\n")
    (d / "max_energy_range_uj").write_text(f"{max_range}\n")
    (d / "enabled").write_text("1\n")


def _server(root: Path, package0: int = 1_000_000, dram0: int = 50_000) -> Path:
    """Two sockets, each with a dram sub-zone (as `ls /sys/class/powercap` shows on a Xeon), the
    control-type directory `intel-rapl` and an MMIO zone that repeats package 0."""
    (root / "intel-rapl").mkdir(parents=True, exist_ok=True)
    _zone(root, "intel-rapl:0", "package-0", package0)
    _zone(root, "intel-rapl:0:0", "dram", dram0, 65_712_999_613)
    _zone(root, "intel-rapl:1", "package-1", 2_000_000)
    _zone(root, "intel-rapl:1:0", "dram", 60_000, 65_712_999_613)
    _zone(root, "intel-rapl-mmio:0", "package-0", 999)
    return root


def test_two_socket_server_zones_in_order(tmp_path: Path) -> None:
    s = read_rapl(_server(tmp_path), clock=lambda: 5.0)
    assert s.reason == "" and s.scope == "node" and s.timestamp == 5.0
    assert [(z.zone, z.name, z.energy_uj) for z in s.zones] == [
        ("intel-rapl:0", "package-0", 1_000_000), ("intel-rapl:0:0", "dram", 50_000),
        ("intel-rapl:1", "package-1", 2_000_000), ("intel-rapl:1:0", "dram", 60_000)]  # no mmio duplicate
    assert s.zones[0].max_energy_range_uj == RANGE


def test_zone_ten_sorts_after_nine(tmp_path: Path) -> None:
    for n in (10, 9, 2):
        _zone(tmp_path, f"intel-rapl:{n}", f"package-{n}", 1)
    assert [z.zone for z in read_rapl(tmp_path).zones] == ["intel-rapl:2", "intel-rapl:9", "intel-rapl:10"]


def test_vm_without_powercap_says_so(tmp_path: Path) -> None:
    s = read_rapl(tmp_path / "absent")
    assert s.zones == () and "is absent" in s.reason and "VM" in s.reason


def test_powercap_without_rapl_zones_says_so(tmp_path: Path) -> None:
    (tmp_path / "dtpm").mkdir()
    s = read_rapl(tmp_path)
    assert s.zones == () and "no RAPL zone" in s.reason


def test_root_only_energy_is_said_not_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _server(tmp_path)
    real_open = builtins.open

    def guarded(path, *args, **kwargs):  # noqa: ANN001, ANN202 - mode 0400 as the kernel sets it (tests may run as root)
        if str(path).endswith("energy_uj"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(rapl, "open", guarded, raising=False)
    s = read_rapl(tmp_path)
    assert [z.energy_uj for z in s.zones] == [None] * 4 and [z.name for z in s.zones][:2] == ["package-0", "dram"]
    assert "root only" in s.reason
    assert rapl_energy([s, s]).package_j is None


def test_garbage_and_escapes_are_not_numbers(tmp_path: Path) -> None:
    _zone(tmp_path, "intel-rapl:0", "package-0\x1b]0;owned\x07", "12ab")
    _zone(tmp_path, "intel-rapl:1", "package-1", "１２")  # non-ASCII digits
    s = read_rapl(tmp_path)
    assert [z.energy_uj for z in s.zones] == [None, None] and s.zones[0].name == "package-0"
    assert "no readable energy_uj" in s.reason


def test_node_cpu_energy_from_two_readings_with_a_wrap(tmp_path: Path) -> None:
    first = read_rapl(_server(tmp_path / "a", package0=RANGE - 1_000_000), clock=lambda: 0.0)
    second = read_rapl(_server(tmp_path / "b", package0=4_000_000, dram0=1_050_000), clock=lambda: 10.0)
    energy = rapl_energy([first, second])
    assert energy.package_j == pytest.approx(5.0)  # package-0 wrapped: 1 J to the top, 4 J after; package-1 did not move
    assert energy.dram_j == pytest.approx(1.0) and energy.scope == "node" and energy.seconds == 10.0
    assert any("package-0: wrapped 1 time" in n for n in energy.notes)
    assert [label for label, _ in energy.zones] == ["package-0", "package-0/dram", "package-1", "package-1/dram"]
