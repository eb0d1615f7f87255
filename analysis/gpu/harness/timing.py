"""Event timings of repeated launches (CUDA events outside any profiler: warm-up, then one event pair per
launch)."""

from __future__ import annotations

import ctypes
import statistics
from dataclasses import dataclass, field

import numpy as np

from analysis.gpu.harness.driver import _check


@dataclass
class Timing:
    """Event timings of repeated launches, in ns (cuEventElapsedTime, ~0.5 us resolution)."""

    warmups: int
    repeats: int
    samples_ns: list[float] = field(repr=False)
    gated: bool = False

    @property
    def median_ns(self) -> float:
        return statistics.median(self.samples_ns)

    def quantile_ns(self, q: float) -> float:
        return float(np.quantile(np.asarray(self.samples_ns), q))


def _gate(cu):
    """A host-memory flag a stream can wait on (cuStreamWaitValue32), or None where the
    driver refuses mapped host memory."""
    try:
        host = _check(cu.cuMemHostAlloc(4, cu.CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc")
        dev = _check(cu.cuMemHostGetDevicePointer(host, 0), "cuMemHostGetDevicePointer")
    except RuntimeError:
        return None
    ctypes.c_uint32.from_address(int(host)).value = 0
    return host, dev


def time_launches(stream, launch, warmups: int, repeats: int, chunk: int = 100) -> Timing:
    """Event timings of ``repeats`` calls of ``launch`` after ``warmups`` untimed ones; each
    call is bracketed by its own pair of events recorded on ``stream``.

    Args:
        stream: the CUstream (or its integer handle) that ``launch`` enqueues work on, in the
            current context.
        launch: a callable enqueuing one launch (asynchronously) on ``stream``.

    The launches of a chunk are enqueued behind a stream wait on a host flag
    (cuStreamWaitValue32) that is released only once the whole chunk is queued, so the
    GPU runs them back to back and an event pair measures the kernel, not the host's
    launch latency (which exceeds the kernel's time at small N). Chunks of at most
    ``chunk`` launches keep the queue far from full. Without stream memory operations
    the launches are timed ungated, and ``Timing.gated`` says so.

    Raises:
        RuntimeError: a CUDA call failed (the message names it).
    """
    from cuda.bindings import driver as cu

    stream = stream if isinstance(stream, cu.CUstream) else cu.CUstream(int(stream))
    for _ in range(warmups):
        launch()
    _check(cu.cuStreamSynchronize(stream), "warm-up launches")
    gate = _gate(cu)
    events = [(_check(cu.cuEventCreate(0), "cuEventCreate"), _check(cu.cuEventCreate(0), "cuEventCreate"))
              for _ in range(repeats)]
    for c0 in range(0, repeats, chunk):
        if gate is not None:
            try:
                _check(cu.cuStreamWaitValue32(stream, gate[1], c0 // chunk + 1,
                                              cu.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_GEQ),
                       "cuStreamWaitValue32")
            except RuntimeError:
                cu.cuMemFreeHost(gate[0])
                gate = None
        for start, end in events[c0: c0 + chunk]:
            _check(cu.cuEventRecord(start, stream), "cuEventRecord")
            launch()
            _check(cu.cuEventRecord(end, stream), "cuEventRecord")
        if gate is not None:
            ctypes.c_uint32.from_address(int(gate[0])).value = c0 // chunk + 1
        _check(cu.cuStreamSynchronize(stream), "timed launches")
    samples = [1e6 * _check(cu.cuEventElapsedTime(s, e), "cuEventElapsedTime") for s, e in events]
    for s, e in events:
        cu.cuEventDestroy(s)
        cu.cuEventDestroy(e)
    gated = gate is not None
    if gate is not None:
        cu.cuMemFreeHost(gate[0])
    return Timing(warmups, repeats, samples, gated)
