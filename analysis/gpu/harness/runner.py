"""One kernel from one cubin with its device buffers: check it, time it, and run the launch the profiler
records."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from analysis.errors import CheckFailedError, ConfigError
from analysis.precision import C_DTYPES, gemm_ops, precision_of
from analysis.gpu.harness.check import CheckResult, compare
from analysis.gpu.harness.driver import _check, primary_context
from analysis.gpu.harness.inputs import device_rng, make_inputs, sample_rows
from analysis.gpu.harness.tiling import Tiling
from analysis.gpu.harness.timing import Timing, time_launches
from analysis.gpu.harness.tma import (C_TMA_GLOBAL, TENSOR_MAP_BYTES, TMA_GLOBALS, TensorMapShape, _encode_tensor_map,
                                      c_tensor_map_shape, cubin_globals, tensor_map_shapes)


# C is filled with this 32-bit pattern before a checked launch: a quiet NaN as float32,
# and 2139062143 as int32, beyond the largest |C| an INT8 GEMM with K <= 2**16 can reach
# (128 * 128 * 2**16 = 2**30).
POISON_F32 = 0x7FC0DEAD
POISON_S32 = 0x7F7F7F7F
# The 16-bit pattern of FP16 C (c_dtype float16): a quiet NaN in IEEE 754 binary16.
POISON_F16 = 0x7EAD


class GemmRunner:
    """One kernel from one cubin, with device buffers for an M x N x K problem.

    Args:
        cubin: path of the cubin built for this GPU's architecture.
        kernel: the kernel's (extern "C") name in the cubin.
        precision: ``fp16``, ``int8`` or ``int4``.
        tiling: the tiling the cubin was built with (grid = (N/block_n, M/block_m)).
        m, n, k: problem size in elements; refused with ConfigError if not tileable.
        seed: seed of the random inputs, drawn with :func:`device_rng` (CuPy's generator on
            a GPU with CuPy, else NumPy's; ``self.rng`` names it, None for given ``inputs``).
        accumulator, b_layout: the kernel's accumulator and B layout (see :func:`make_inputs`).
        c_dtype: ``"float16"`` for a kernel writing C in FP16 (:data:`C_DTYPES`; FP16 inputs
            with FP32 accumulators), None for the precision's own (``Precision.c_dtype``).
        tma: the kernel reads A and B through tensor maps in its globals :data:`TMA_GLOBALS`
            (registry ``tma: true``), which the runner encodes (:func:`tensor_map_shapes`) and
            writes once the inputs are on the device (B column-major only).
            Where the module also has the global :data:`C_TMA_GLOBAL` (a kernel built with
            EPI_TMA, storing C through the copy engine), the runner writes C's tensor map
            there too (:func:`c_tensor_map_shape`).
        inputs: what :func:`make_inputs` returned for this precision, size, accumulator and
            layout, to run on instead of drawing new ones from ``seed`` (a kernel timed in
            pairs with a library GEMM runs on the library's inputs; :mod:`analysis.gpu.paired`).

    Raises:
        ConfigError: the size does not tile, or the tensor maps cannot describe it;
        RuntimeError: a CUDA call failed.
    """

    def __init__(self, cubin: Path, kernel: str, precision: str, tiling: Tiling,
                 m: int, n: int, k: int, seed: int, *, accumulator: str | None = None,
                 b_layout: str = "col", tma: bool = False, inputs: tuple | None = None,
                 c_dtype: str | None = None) -> None:
        from cuda.bindings import driver as cu

        self.cu = cu
        self.kernel, self.prec, self.tiling = kernel, precision_of(precision), tiling
        self.accumulator = accumulator
        if c_dtype is not None and c_dtype not in C_DTYPES:
            raise ConfigError(f"{kernel}: c_dtype {c_dtype!r}: expected one of {sorted(C_DTYPES)}")
        if c_dtype is not None and (self.prec.name != "fp16" or accumulator):
            raise ConfigError(f"{kernel}: c_dtype {c_dtype} needs FP16 inputs with FP32 accumulators, not "
                              f"precision {self.prec.name}" + (f" with accumulator {accumulator}" if accumulator else ""))
        self.c_dtype = C_DTYPES[c_dtype] if c_dtype else self.prec.c_dtype
        self.m, self.n, self.k, self.seed = m, n, k, seed
        tiling.check_shape(kernel, self.prec, m, n, k)
        tma_shapes = tensor_map_shapes(kernel, self.prec, tiling, m, n, k) if tma else None
        if tma and b_layout != "col":
            raise ConfigError(f"{kernel}: the TMA kernels read B column-major (N rows of K), not b_layout={b_layout}")
        # inputs first: a refused accumulator or layout raises before any CUDA resource exists
        if inputs is None:  # drawn on the GPU where CuPy is (device_rng): seconds less per N at N = 8192
            xp, rng = device_rng(seed)
            self.rng = f"{xp.__name__}.random.default_rng"
            inputs = make_inputs(self.prec, m, n, k, rng, accumulator=accumulator, b_layout=b_layout, xp=xp)
        elif inputs[2].shape != (m, k) or inputs[3].shape != (n, k):
            raise ConfigError(f"{kernel}: inputs of A {inputs[2].shape} and B^T {inputs[3].shape} given for "
                              f"M={m} N={n} K={k}")
        else:
            self.rng = None
        a_dev, b_dev, self.a_ref, self.b_ref = inputs
        dev = primary_context(cu)
        image = Path(cubin).read_bytes()
        self._globals = cubin_globals(image, str(cubin)) if tma else {}
        self.module = _check(cu.cuModuleLoadData(image), f"cuModuleLoadData({cubin})")
        self.func = _check(cu.cuModuleGetFunction(self.module, kernel.encode()),
                           f"cuModuleGetFunction({kernel})")
        if tiling.smem_bytes:
            self._allow_dynamic_smem(dev)
        self.sms = _check(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                  dev), "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)")
        self.stream = _check(cu.cuStreamCreate(0), "cuStreamCreate")

        self.c_bytes = m * n * self.c_dtype.itemsize
        self.d_a = self._upload(a_dev)
        self.d_b = self._upload(b_dev)
        if not isinstance(a_dev, np.ndarray):  # CuPy's pool gives back the draws' temporaries
            del a_dev, b_dev
            import cupy
            cupy.get_default_memory_pool().free_all_blocks()
        self.d_c = _check(cu.cuMemAlloc(self.c_bytes), "cuMemAlloc(C)")
        self.c_tensor_map = False  # C's tensor map written (_write_c_tensor_map)
        if tma_shapes:
            self._write_tensor_maps(tma_shapes)
            self._write_c_tensor_map()
        # kernelParams: an array of pointers to each argument's value.
        self._argv = [np.array([int(self.d_a)], np.uint64), np.array([int(self.d_b)], np.uint64),
                      np.array([int(self.d_c)], np.uint64), np.array([m], np.int32),
                      np.array([n], np.int32), np.array([k], np.int32)]
        self._params = np.array([v.ctypes.data for v in self._argv], dtype=np.uint64)

    def _allow_dynamic_smem(self, dev) -> None:
        """Raise the kernel's dynamic shared-memory limit to ``tiling.smem_bytes`` (a launch
        asking for more than 48 KiB fails without it).

        Raises:
            ConfigError: the device allows less per block (the module is unloaded first).
        """
        cu, want = self.cu, self.tiling.smem_bytes
        optin = _check(cu.cuDeviceGetAttribute(
            cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
            "cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)")
        static = _check(cu.cuFuncGetAttribute(cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                              self.func), "cuFuncGetAttribute(SHARED_SIZE_BYTES)")
        if want + static > optin:
            cu.cuModuleUnload(self.module)
            raise ConfigError(f"{self.kernel}: {want} bytes of dynamic (+ {static} static) shared memory per "
                              f"block, this GPU allows {optin}")
        _check(cu.cuFuncSetAttribute(self.func,
                                     cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                     want), f"cuFuncSetAttribute({self.kernel}, MAX_DYNAMIC_SHARED_SIZE_BYTES)")

    def _write_tensor_map(self, name: str, ptr, shape: TensorMapShape) -> None:
        """Encode the tensor map of the matrix at device pointer ``ptr`` (``shape``) and copy
        it into the module's global ``name`` (a synchronous copy: in place before any launch).

        Raises:
            RuntimeError: the module lacks the global, it is not a tensor map's size
            (:data:`TENSOR_MAP_BYTES`), or a CUDA call failed.
        """
        cu = self.cu
        dptr, size = _check(cu.cuModuleGetGlobal(self.module, name.encode()), f"cuModuleGetGlobal({name})")
        if size != TENSOR_MAP_BYTES:
            raise RuntimeError(f"{self.kernel}: global {name} holds {size} bytes, a tensor map {TENSOR_MAP_BYTES}")
        raw = _encode_tensor_map(cu, ptr, shape)
        _check(cu.cuMemcpyHtoD(dptr, raw.ctypes.data, TENSOR_MAP_BYTES), f"cuMemcpyHtoD({name})")

    def _write_tensor_maps(self, shapes: tuple[TensorMapShape, TensorMapShape]) -> None:
        """Write the tensor maps of A and B into the module's globals :data:`TMA_GLOBALS`
        (:meth:`_write_tensor_map`).

        Raises:
            RuntimeError: as :meth:`_write_tensor_map`.
        """
        for name, shape, ptr in zip(TMA_GLOBALS, shapes, (self.d_a, self.d_b)):
            self._write_tensor_map(name, ptr, shape)

    def _write_c_tensor_map(self) -> None:
        """Write C's tensor map into the module's global :data:`C_TMA_GLOBAL`, where the module
        has one (a kernel built with EPI_TMA); nothing where it has none.

        Raises:
            ConfigError: C is not 4 bytes an element, or its blocks are not whole boxes;
            RuntimeError: as :meth:`_write_tensor_map`.
        """
        if C_TMA_GLOBAL not in self._globals:  # asked of the cubin: no failing CUDA call (cubin_globals)
            return
        shape = c_tensor_map_shape(self.kernel, self.tiling, self.m, self.n, self.c_dtype.itemsize)
        self._write_tensor_map(C_TMA_GLOBAL, self.d_c, shape)
        self.c_tensor_map = True

    def _upload(self, arr):
        """A new device allocation holding ``arr``: a NumPy array (copied from the host) or a
        CuPy array on this GPU (copied on the device, then the context synchronised, so that
        the copy is done whatever stream CuPy drew it on)."""
        if isinstance(arr, np.ndarray):
            arr = np.ascontiguousarray(arr)
            ptr = _check(self.cu.cuMemAlloc(arr.nbytes), "cuMemAlloc")
            _check(self.cu.cuMemcpyHtoD(ptr, arr.ctypes.data, arr.nbytes), "cuMemcpyHtoD")
            return ptr
        import cupy

        arr = cupy.ascontiguousarray(arr)
        ptr = _check(self.cu.cuMemAlloc(arr.nbytes), "cuMemAlloc")
        _check(self.cu.cuMemcpyDtoD(ptr, arr.data.ptr, arr.nbytes), "cuMemcpyDtoD")
        _check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")
        return ptr

    def poison(self) -> None:
        """Fill C with the poison pattern (NaN for FP32 and FP16 C, an unreachable value for INT32)."""
        if self.c_dtype == np.float16:
            _check(self.cu.cuMemsetD16Async(self.d_c, POISON_F16, self.m * self.n, self.stream), "cuMemsetD16")
            return
        pattern = POISON_F32 if self.c_dtype == np.float32 else POISON_S32
        _check(self.cu.cuMemsetD32Async(self.d_c, pattern, self.m * self.n, self.stream), "cuMemsetD32")

    def launch(self) -> None:
        """Enqueue one launch on the runner's stream (asynchronous)."""
        t = self.tiling
        gx, gy = t.grid(self.m, self.n, self.sms)
        _check(self.cu.cuLaunchKernel(self.func, gx, gy, 1, t.threads, 1, 1, t.smem_bytes, self.stream,
                                      self._params.ctypes.data, 0),
               f"cuLaunchKernel({self.kernel})")

    def sync(self) -> None:
        _check(self.cu.cuStreamSynchronize(self.stream), f"{self.kernel} execution")

    def result(self) -> np.ndarray:
        """C copied back to the host, shape (M, N), float32, int32 or (c_dtype float16) float16."""
        out = np.empty((self.m, self.n), dtype=self.c_dtype)
        _check(self.cu.cuMemcpyDtoH(out.ctypes.data, self.d_c, self.c_bytes), "cuMemcpyDtoH")
        return out

    def check(self, rows: np.ndarray | None = None, *, profiled: bool = False) -> CheckResult:
        """Poison C, launch once, compare with the float64 reference (all of C, or ``rows``).
        ``profiled``: the launch runs between ``cuProfilerStart`` and ``cuProfilerStop``, so
        that it is the one a profiler started with ``--profile-from-start off`` keeps."""
        self.poison()
        if profiled:
            _check(self.cu.cuProfilerStart(), "cuProfilerStart")
        try:
            self.launch()
            self.sync()
        finally:
            if profiled:
                _check(self.cu.cuProfilerStop(), "cuProfilerStop")
        return compare(self.result(), self.a_ref, self.b_ref, self.prec, rows, self.accumulator)

    def time(self, warmups: int, repeats: int, chunk: int = 100) -> Timing:
        """Event timings of this kernel's launches (see :func:`time_launches`)."""
        return time_launches(self.stream, self.launch, warmups, repeats, chunk)

    def close(self) -> None:
        for p in (self.d_a, self.d_b, self.d_c):
            self.cu.cuMemFree(p)
        self.cu.cuModuleUnload(self.module)
        self.cu.cuStreamDestroy(self.stream)


def check_and_time(cubin: Path, kernel: str, precision: str, n: int, tiling: Tiling,
                   warmups: int, repeats: int, seed: int, *, accumulator: str | None = None,
                   b_layout: str = "col", tma: bool = False, c_dtype: str | None = None) -> dict:
    """Check one kernel at M = N = K = n, then time it; returns the record written to JSON.
    ``accumulator`` and ``b_layout`` describe the kernel (see :func:`make_inputs`), ``tma``
    its tensor maps and ``c_dtype`` the C it writes (see :class:`GemmRunner`).

    The record holds kernel, precision, n, seed, rng (the generator the seed seeds, e.g.
    ``cupy.random.default_rng``: :func:`device_rng`), check outcome (max_abs_error, rel_fro_error,
    tolerance), timing (median/min/p25/p75/max in ns, warmups, repeats) and throughput
    (2*N^3 / median, in TFLOP/s for FP16 or TOP/s for INT8/INT4); ``gated`` tells whether
    the launches ran back to back behind a stream gate (see :meth:`GemmRunner.time`).

    Raises:
        CheckFailedError: the output is wrong; the message has the largest error and the
            first bad (row, col). No timing is taken then.
    """
    run = GemmRunner(cubin, kernel, precision, tiling, n, n, n, seed, accumulator=accumulator,
                     b_layout=b_layout, tma=tma, c_dtype=c_dtype)
    try:
        chk = run.check()
        if not chk.passed:
            raise CheckFailedError(
                f"{kernel} N={n}: {chk.bad_count} of {n * n} elements outside tolerance "
                f"({chk.tolerance}); max |C-ref| = {chk.max_abs_error:g}, first bad (row, col) = "
                f"{chk.first_bad}, seed {seed}")
        tim = run.time(warmups, repeats)
    finally:
        run.close()
    ops = gemm_ops(n, n, n)
    med = tim.median_ns
    return {
        "kernel": kernel, "precision": precision, "n": n, "seed": seed, "rng": run.rng,
        "accumulator": accumulator, "b_layout": b_layout, "c_dtype": str(run.c_dtype),
        "check": asdict(chk),
        "warmups": tim.warmups, "repeats": tim.repeats, "gated": tim.gated,
        "median_ns": med, "min_ns": min(tim.samples_ns), "p25_ns": tim.quantile_ns(0.25),
        "p75_ns": tim.quantile_ns(0.75), "max_ns": max(tim.samples_ns),
        "ops": ops, "throughput": ops / med / 1e3, "throughput_unit": run.prec.throughput_unit,
        "samples_ns": tim.samples_ns,
    }


def profile_target(cubin: Path, kernel: str, precision: str, n: int, tiling: Tiling,
                   warmups: int, seed: int, *, accumulator: str | None = None,
                   b_layout: str = "col", tma: bool = False, c_dtype: str | None = None) -> CheckResult:
    """The program ncu profiles, for one N: ``warmups`` launches, then one launch between
    ``cuProfilerStart`` and ``cuProfilerStop`` (the one ncu keeps, run with
    ``--profile-from-start off``), whose output is then checked on the rows of
    :func:`sample_rows` (the full check ran before, in check-time mode; the sample keeps
    the float64 reference off the profiling job's critical path at large N). Called once
    per N in one process, it gives one report with one launch per N, in call order.

    Raises:
        CheckFailedError: the profiled launch's output is wrong.
        RuntimeError: a CUDA call failed.
    """
    run = GemmRunner(cubin, kernel, precision, tiling, n, n, n, seed, accumulator=accumulator,
                     b_layout=b_layout, tma=tma, c_dtype=c_dtype)
    try:
        for _ in range(warmups):
            run.launch()
        run.sync()
        chk = run.check(sample_rows(n, tiling.block_m, np.random.default_rng(seed)), profiled=True)
    finally:
        run.close()
    if not chk.passed:
        raise CheckFailedError(f"{kernel} N={n}: profiled launch wrong: max |C-ref| = "
                               f"{chk.max_abs_error:g}, first bad (row, col) = {chk.first_bad}")
    return chk
