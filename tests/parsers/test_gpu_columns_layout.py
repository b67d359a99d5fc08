"""gpu_columns over samples where a GPU is missing, listed twice or has no index: each GPU's
readings per sample (n/a where it was not read, its last reading when listed twice), its
throttle spells' reasons (the first listing's), and the same from one chunk or several."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from gpuscope.parsers.recording import schema as recording_schema
from gpuscope.parsers.recording.columns import gpu_columns


def _gpu(index, util, reasons=(), note=""):
    return {"index": index, "util_gpu": util, "memory_used": 1, "throttle_reasons": list(reasons), "energy_note": note, "power_w": util}


SAMPLES = [
    [_gpu(0, 10.0), _gpu(1, 20.0)],
    None,  # no GPU list at all
    [_gpu(1, 21.0, ["sw_power_cap"], note="a"), _gpu(None, 99.0), _gpu(1, 22.0, ["hw_slowdown"])],  # GPU 1 twice, one with no index
    [_gpu(0, 11.0, ["gpu_idle"]), _gpu(1, 23.0, ["thermal"], note="b")],
    [_gpu(0, 12.0, ["thermal"])],
]


def _check(column) -> None:
    got = gpu_columns(column, len(SAMPLES))
    assert sorted(got) == [0, 1]
    zero, one = got[0], got[1]
    np.testing.assert_array_equal(zero.util, [10.0, np.nan, np.nan, 11.0, 12.0])
    np.testing.assert_array_equal(one.util, [20.0, np.nan, 22.0, 23.0, np.nan])  # listed twice: its last reading
    np.testing.assert_array_equal(one.readings["power_w"], one.util)
    np.testing.assert_array_equal(zero.throttled, [False, False, False, False, True])  # gpu_idle is not throttling
    np.testing.assert_array_equal(one.throttled, [False, False, True, True, False])
    assert zero.reasons_at == {4: ["thermal"]}
    assert one.reasons_at == {2: ["sw_power_cap"]}  # the spell's start: its first listing's reasons
    assert one.notes["energy_note"] == "b" and zero.notes["energy_note"] == ""


def test_gpu_columns_missing_twice_and_unindexed() -> None:
    array = pa.array(SAMPLES, type=recording_schema.GPUS_TYPE)
    _check(array)
    _check(pa.chunked_array([array.slice(0, 2), array.slice(2)]))


def test_gpu_columns_without_readings_keeps_the_utilisation_and_memory() -> None:
    array = pa.array(SAMPLES, type=recording_schema.GPUS_TYPE)
    whole, lean = gpu_columns(array, len(SAMPLES)), gpu_columns(array, len(SAMPLES), readings=False)
    assert sorted(lean) == sorted(whole)
    for index, columns in lean.items():
        assert columns.readings == {} and columns.notes == {}  # not made: the report's reduction reads none of them
        for name in ("util", "mem_bytes", "mem_total", "throttled"):
            np.testing.assert_array_equal(getattr(columns, name), getattr(whole[index], name))
        assert columns.simulated == whole[index].simulated and columns.reasons_at == whole[index].reasons_at
