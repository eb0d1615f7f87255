"""A kernel's block and warp tiling: its build parameters, grid, threads and shared memory."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields

from analysis.errors import ConfigError
from analysis.precision import Precision


@dataclass(frozen=True)
class Tiling:
    """Block and warp tiling a kernel was built with (the -D build parameters), and what
    its launch needs: grid (N / block_n, M / block_m), ``threads`` per block and
    ``smem_bytes`` of dynamic shared memory.

    Attributes:
        block_m, block_n: rows and columns of C per thread block.
        block_k_bytes: bytes of K per shared-memory tile row (64 = 32 FP16, 64 INT8 or 128 INT4).
        warps_m, warps_n: the warp grid inside a block; a warp computes
            (block_m / warps_m) x (block_n / warps_n) of C.
        stages: cp.async pipeline depth.
        raster: block rows per group of the grid's rasterisation (1: blocks in plain row
            order; kernels/tuned_gemm.cuh only).
        smem_bytes: dynamic shared memory per block, in bytes (0: the kernel's static shared
            memory only, as every study kernel); the kernel checks at build time that it
            lays out exactly this much.
        producer_warps: warps beside the warps_m x warps_n grid that only load tiles (the
            TMA producer warpgroup of kernels/wgmma_gemm.cuh: 4; 0 for every other kernel).
        cluster_m: CTAs per thread-block cluster along M (CLUSTER_M of kernels/wgmma_gemm.cuh
            and kernels/int4_wgmma.cuh: the CTAs of a cluster compute vertically adjacent
            blocks and each copies its 1 / cluster_m of their common B tile, by TMA, into all of
            them, with one multicast (wgmma_gemm.cuh) or, unpacked, with the bulk copy engine
            (int4_wgmma.cuh)); 1: no cluster. The cluster shape is compiled into the kernel
            (__cluster_dims__).
        persistent: 1 for a persistent kernel (PERSISTENT of kernels/wgmma_gemm.cuh and
            kernels/int4_wgmma.cuh): the grid is (1, P), P the GPU's SM count rounded down to
            whole clusters (or the number of blocks of C, if fewer), each CTA looping over
            blocks of C; 0: one CTA per block. The persistent INT4 kernel (the only TMA
            kernel with 64-byte K tiles) takes K tiles in pairs, so K must be a multiple of
            two of them (:meth:`check_shape`).
        arch: the nvcc target the kernel needs instead of the configured architecture
            (``sm_90a`` for the wgmma kernels, set by
            :func:`analysis.workflow.tiling_from_config` from the registry's archs); None
            builds for the configured one. Not part of the harness's ``--tiling``.
    """

    block_m: int = 64
    block_n: int = 32
    block_k_bytes: int = 64
    warps_m: int = 4
    warps_n: int = 2
    stages: int = 2
    raster: int = 1
    smem_bytes: int = 0
    producer_warps: int = 0
    cluster_m: int = 1
    persistent: int = 0
    arch: str | None = None

    def __post_init__(self) -> None:
        """Refuse a tiling no kernel can be built or launched with.

        Raises:
            ConfigError: a value that is not an integer (4.0 included: it would reach nvcc
                as -DSTAGES=4.0), a block, K-tile, warp or stage count below 1, a negative
                raster, shared-memory size or producer-warp count, cluster_m other than 1 or
                2, or persistent other than 0 or 1, naming the field and its value.
        """
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "arch" and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
                raise ConfigError(f"tiling: {f.name}={value!r} must be an integer")
        for name in ("block_m", "block_n", "block_k_bytes", "warps_m", "warps_n", "stages", "raster"):
            if getattr(self, name) < 1:
                raise ConfigError(f"tiling: {name}={getattr(self, name)} must be at least 1")
        for name in ("smem_bytes", "producer_warps"):
            if getattr(self, name) < 0:
                raise ConfigError(f"tiling: {name}={getattr(self, name)} must not be negative")
        if self.cluster_m not in (1, 2):
            raise ConfigError(f"tiling: cluster_m={self.cluster_m} must be 1 (no cluster) or 2")
        if self.persistent not in (0, 1):
            raise ConfigError(f"tiling: persistent={self.persistent} must be 0 or 1")

    @property
    def threads(self) -> int:
        """Threads per block: 32 per warp of the warps_m x warps_n grid and per producer warp."""
        return (self.warps_m * self.warps_n + self.producer_warps) * 32

    def grid(self, m: int, n: int, sms: int | None = None) -> tuple[int, int]:
        """The launch grid (x, y) for an M x N output: (N / block_n, M / block_m), or for a
        persistent kernel (1, P) with P = min(``sms`` rounded down to whole clusters (one
        cluster at least), the number of blocks of C).

        Raises:
            ConfigError: a persistent tiling without ``sms`` (the GPU's SM count).
        """
        if not self.persistent:
            return n // self.block_n, m // self.block_m
        if not sms or sms < 1:
            raise ConfigError(f"a persistent kernel's grid needs the GPU's SM count (got {sms!r})")
        blocks = (n // self.block_n) * (m // self.block_m)
        # at least one cluster, however few the SMs (check_shape makes blocks a multiple of it)
        return 1, min(max(sms // self.cluster_m, 1) * self.cluster_m, blocks)

    def _extras(self) -> bool:
        return (self.raster, self.smem_bytes) != (1, 0)

    def defines(self) -> list[str]:
        """nvcc -D flags that select this tiling in kernels/gemm_common.cuh (and
        kernels/tuned_gemm.cuh, kernels/wgmma_gemm.cuh); RASTER, SMEM_BYTES and PRODUCER_WARPS
        only where they differ from 1, 0 and 0, so the study kernels build with exactly the
        flags they always had; ``-arch=<arch>`` last where the kernel needs its own target
        (analysis.gpu.build then builds for it instead of the configured architecture)."""
        flags = [f"-DBLOCK_M={self.block_m}", f"-DBLOCK_N={self.block_n}",
                 f"-DBLOCK_K_BYTES={self.block_k_bytes}", f"-DWARPS_M={self.warps_m}",
                 f"-DWARPS_N={self.warps_n}", f"-DSTAGES={self.stages}"]
        if self.raster != 1:
            flags.append(f"-DRASTER={self.raster}")
        if self.smem_bytes:
            flags.append(f"-DSMEM_BYTES={self.smem_bytes}")
        if self.producer_warps:
            flags.append(f"-DPRODUCER_WARPS={self.producer_warps}")
        if self.cluster_m != 1:
            flags.append(f"-DCLUSTER_M={self.cluster_m}")
        if self.persistent:
            flags.append(f"-DPERSISTENT={self.persistent}")
        if self.arch:
            flags.append(f"-arch={self.arch}")
        return flags

    def cli(self) -> str:
        """The ``--tiling`` argument of the harness command line for this tiling: six
        numbers, or eight (raster and smem_bytes appended) where those are not 1 and 0, or
        nine (producer_warps appended) where that is not 0, or eleven (cluster_m and
        persistent appended) where those are not 1 and 0."""
        values = [self.block_m, self.block_n, self.block_k_bytes, self.warps_m, self.warps_n, self.stages]
        cluster = (self.cluster_m, self.persistent) != (1, 0)
        if self._extras() or self.producer_warps or cluster:
            values += [self.raster, self.smem_bytes]
        if self.producer_warps or cluster:
            values.append(self.producer_warps)
        if cluster:
            values += [self.cluster_m, self.persistent]
        return ",".join(str(v) for v in values)

    @classmethod
    def parse(cls, text: str) -> Tiling:
        """The inverse of :meth:`cli`.

        Raises:
            ConfigError: not six, eight, nine or eleven comma-separated integers.
        """
        try:
            values = [int(x) for x in text.split(",")]
        except ValueError:
            values = []
        if len(values) not in (6, 8, 9, 11):
            raise ConfigError(f"--tiling {text!r}: expected block_m,block_n,block_k_bytes,warps_m,warps_n,stages"
                              "[,raster,smem_bytes[,producer_warps[,cluster_m,persistent]]] "
                              "(six, eight, nine or eleven integers)")
        return cls(*values)

    def block_k(self, prec: Precision) -> int:
        """K elements per tile for a precision."""
        return self.block_k_bytes * 8 // prec.bits

    @property
    def k_tiles_in_pairs(self) -> bool:
        """Whether the kernel takes K tiles two at a time and has no code for an odd count:
        the persistent INT4 wgmma kernel (kernels/int4_wgmma.cuh, PERSISTENT), the only TMA
        kernel (producer warps) with 64-byte K tiles."""
        return bool(self.persistent and self.producer_warps and self.block_k_bytes == 64)

    def check_shape(self, kernel: str, prec: Precision, m: int, n: int, k: int) -> None:
        """Refuse sizes the kernel cannot handle, before any launch.

        Raises:
            ConfigError: M, N or K is not a positive multiple of its tile (M of the
                cluster's cluster_m blocks; K of two K tiles for the persistent INT4 kernel,
                kernels/int4_wgmma.cuh, whose A registers alternate between two tiles: an
                odd count would make ptxas serialize its wgmma).
        """
        bk = self.block_k(prec)
        k_tile = 2 * bk if self.k_tiles_in_pairs else bk
        for dim, val, tile in (("M", m, self.block_m * self.cluster_m), ("N", n, self.block_n), ("K", k, k_tile)):
            if val <= 0 or val % tile:
                cluster = f", clusters of {self.cluster_m} block rows" if self.cluster_m != 1 else ""
                raise ConfigError(f"{kernel}: {dim}={val} is not a positive multiple of its tile "
                                  f"{tile} (tiling {self.block_m}x{self.block_n}{cluster}, K tile {bk}"
                                  f"{', K tiles in pairs' if k_tile != bk else ''})")
