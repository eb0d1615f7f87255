"""Load a kernel's cubin, check it against a float64 reference and time it with CUDA events.

Runs on the CUDA driver API through cuda-python (``cuda.bindings.driver``); needs a GPU.
Command line (used by the workflow, and under ``ncu`` for profiling):

    python -m analysis.gpu.harness check-time --cubin K.cubin --kernel K --precision int8 --n 4096 --out K.json
    python -m analysis.gpu.harness profile    --cubin K.cubin --kernel K --precision int8 --n 512 1024 4096

Inputs are uniform random integers (INT8 in [-128, 127], INT4 in [-8, 7]) or uniform
random FP16 values in [-1, 1], drawn fresh for every run from a recorded seed; C is
poisoned before every checked launch so an unwritten element fails the check. A kernel
with FP16 accumulators (``--accumulator f16``) gets random FP16 integers in {-1, 0, 1}
instead and must match exactly; one that reads B row-major (``--b-layout row``) gets the
same values with B stored K x N.
"""

from __future__ import annotations

from analysis.gpu.harness.check import CheckResult, compare, fp32_accumulation_bound  # noqa: F401
from analysis.gpu.harness.cli import command, main  # noqa: F401
from analysis.gpu.harness.driver import _check, primary_context  # noqa: F401
from analysis.gpu.harness.inputs import (ACCUMULATORS, B_LAYOUTS, _pack_int4, device_rng,  # noqa: F401
                                         gpu_array_module, make_inputs, matmul_f64, sample_rows)
from analysis.gpu.harness.runner import GemmRunner, POISON_F32, POISON_S32, check_and_time, profile_target  # noqa: F401
from analysis.gpu.harness.tiling import Tiling  # noqa: F401
from analysis.gpu.harness.timing import Timing, _gate, time_launches  # noqa: F401
from analysis.gpu.harness.tma import C_TMA_GLOBAL, TENSOR_MAP_BYTES, TMA_GLOBALS, TMA_SWIZZLES, TensorMapShape, _encode_tensor_map, c_tensor_map_shape, cubin_globals, tensor_map_shapes  # noqa: F401
