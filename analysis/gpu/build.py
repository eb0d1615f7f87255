"""Compile kernels to cubins with nvcc and disassemble them with cuobjdump (no GPU needed)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TextIO

from analysis.errors import AnalysisError
from analysis.io import atomic_path, write_json
from analysis.tools import find_tool, nvcc_version, tool_env

#: Flags of every build: optimised device code with line information for Nsight
#: Compute's source view, and ptxas's resource report (registers, smem, spills).
NVCC_FLAGS = ["-cubin", "-O3", "-lineinfo", "-Xptxas", "-v", "-std=c++17"]


@dataclass(frozen=True)
class ResourceUsage:
    """ptxas's resource report for one kernel and architecture.

    Attributes: registers (per thread), shared_bytes (static, per block), stack_bytes,
    spill_store_bytes, spill_load_bytes, constant_bytes (cmem bank 0), barriers.
    """

    kernel: str
    arch: str
    registers: int
    shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    barriers: int


def parse_ptxas(log: str, kernel: str, arch: str) -> ResourceUsage:
    """Parse ``nvcc -Xptxas -v`` output for ``kernel``.

    Raises:
        AnalysisError: the log has no resource line for the kernel.
    """
    # ptxas prints, per function: "Compiling entry function 'name' for 'sm_90'",
    # then "N bytes stack frame, N bytes spill stores, N bytes spill loads" and
    # "Used N registers, used N barriers, N bytes smem, ...".
    block = re.search(rf"Compiling entry function '{re.escape(kernel)}'.*?Used (\d+) registers(.*?)$",
                      log, flags=re.S | re.M)
    if not block:
        raise AnalysisError(f"{kernel} ({arch}): no ptxas resource report in the build log")
    text = log[block.start(): block.end()]

    def num(pattern: str) -> int:
        m = re.search(pattern, text)
        return int(m.group(1)) if m else 0

    return ResourceUsage(kernel=kernel, arch=arch, registers=int(block.group(1)),
                         shared_bytes=num(r"(\d+) bytes smem"), stack_bytes=num(r"(\d+) bytes stack frame"),
                         spill_store_bytes=num(r"(\d+) bytes spill stores"),
                         spill_load_bytes=num(r"(\d+) bytes spill loads"),
                         barriers=num(r"used (\d+) barriers"))


def build_target(arch: str, defines: list[str]) -> tuple[str, list[str]]:
    """(nvcc target, defines without it): the ``-arch=`` a kernel's tiling adds to its
    defines (analysis.gpu.harness.Tiling.arch, e.g. ``sm_90a`` for the wgmma kernels) when it
    is ``arch`` or the architecture-specific form of ``arch``, else ``arch``.

    Raises:
        AnalysisError: the defines name a target of another architecture (``sm_90a`` asked
        while building for ``sm_89``), or more than one.
    """
    wanted = [d.removeprefix("-arch=") for d in defines if d.startswith("-arch=")]
    rest = [d for d in defines if not d.startswith("-arch=")]
    if not wanted:
        return arch, rest
    if len(wanted) > 1 or wanted[0].removesuffix("a") != arch.removesuffix("a"):
        raise AnalysisError(f"building for {arch}: the kernel asks for target(s) {', '.join(wanted)}, which "
                            f"run on another architecture; list the kernel's archs accordingly")
    return wanted[0], rest


def ptxas_advisories(log: str, kernel: str) -> list[dict[str, str | None]]:
    """ptxas's "Potential Performance Loss" advisories for ``kernel`` in an ``nvcc -Xptxas -v``
    log, in order, each once: dicts with ``code`` (e.g. ``"C7512"``), ``function`` (the function
    the advisory names, or None) and ``message`` (its text after the colon). ptxas prints them as
    ``(C7512) Potential Performance Loss: wgmma.mma_async instructions are serialized ... for the
    function 'name'``. Kept: those naming ``kernel``, a function that is not another entry
    function of the log (a device function or lambda the kernel calls; a file with several
    kernels cannot tell whose it is, so each kernel of it gets it), or no function (e.g.
    ``'setmaxnreg' ignored to allow debugging``). An empty list where there are none."""
    entries = set(re.findall(r"Compiling entry function '([^']+)'", log))
    out: list[dict[str, str | None]] = []
    for m in re.finditer(r"\((C\d{4})\) Potential Performance Loss:[ \t]*([^\r\n]*)", log):
        named = re.search(r"function '([^']+)'", m.group(2))
        function = named.group(1) if named else None
        if function is not None and function != kernel and function in entries:
            continue  # another kernel's
        item = {"code": m.group(1), "function": function, "message": m.group(2).strip()}
        if item not in out:
            out.append(item)
    return out


def wgmma_serialized(advisories: list[dict[str, str | None]]) -> bool:
    """Whether any of ``advisories`` (:func:`ptxas_advisories`) says that ptxas serialized
    ``wgmma.mma_async`` instructions: waits for all of them after each, for lack of registers
    (C7512), in a debug build (C7519, ``-G``) or for another reason its message gives."""
    return any("wgmma" in (a["message"] or "") and "serializ" in (a["message"] or "") for a in advisories)


def compile_cubin(source: Path, kernel: str, arch: str, defines: list[str], cubin: Path,
                  resources: Path, nvcc: str | None = None, out: TextIO | None = None) -> ResourceUsage:
    """Build ``source`` for ``arch`` (e.g. ``sm_90``) into ``cubin`` and write the ptxas
    resource report as JSON to ``resources``, with ptxas's performance advisories for the
    kernel (``ptxas_advisories``, :func:`ptxas_advisories`); nvcc's command and output go to ``out``
    (default stdout). A ``-arch=`` among ``defines`` (a kernel needing an
    architecture-specific target, :func:`build_target`) replaces ``arch``; the resource
    report then names that target.

    Raises:
        ToolNotFoundError: no nvcc; AnalysisError: the compilation failed (the message
        holds nvcc's error output), or the defines ask for a target of another architecture.
    """
    exe = find_tool("nvcc", nvcc)
    given = list(defines)
    arch, defines = build_target(arch, defines)
    cmd = [str(exe), *NVCC_FLAGS, f"-arch={arch}", *defines, "-o"]
    with atomic_path(cubin) as tmp:
        proc = subprocess.run([*cmd, str(tmp), str(source)], capture_output=True, text=True,
                              env=tool_env(exe), check=False)
        print(f"$ {' '.join(cmd)} <tmp> {source}\n# nvcc {nvcc_version(exe)}\n{proc.stdout}{proc.stderr}",
              file=out or sys.stdout)
        if proc.returncode != 0:
            raise AnalysisError(f"{source}: nvcc failed for {arch}:\n{proc.stderr.strip()}")
    usage = parse_ptxas(proc.stdout + proc.stderr, kernel, arch)
    write_json(resources, {**asdict(usage), "nvcc": nvcc_version(exe), "defines": given,
                           "ptxas_advisories": ptxas_advisories(proc.stdout + proc.stderr, kernel)})
    return usage


def disassemble(cubin: Path, sass: Path, cuobjdump: str | None = None) -> None:
    """Write ``cuobjdump -sass`` of ``cubin`` to ``sass``.

    Raises:
        ToolNotFoundError: no cuobjdump; AnalysisError: cuobjdump failed (e.g. no nvdisasm).
    """
    exe = find_tool("cuobjdump", cuobjdump)
    extra = []
    try:
        extra.append(find_tool("nvdisasm"))
    except AnalysisError:
        pass  # cuobjdump then reports the missing nvdisasm itself
    proc = subprocess.run([str(exe), "-sass", str(cubin)], capture_output=True, text=True,
                          env=tool_env(exe, *extra), check=False)
    if proc.returncode != 0 or "fatal" in proc.stderr:
        raise AnalysisError(f"{cubin}: cuobjdump -sass failed: {proc.stderr.strip()}")
    with atomic_path(sass) as tmp:
        tmp.write_text(proc.stdout, encoding="utf-8")


def build_kernel(source: Path, kernel: str, arch: str, defines: list[str], cubin: Path, resources: Path,
                 sass: Path, log: Path, nvcc: str | None = None, cuobjdump: str | None = None) -> ResourceUsage:
    """:func:`compile_cubin` then :func:`disassemble`: one kernel for one architecture, in
    this process (no interpreter of its own), with nvcc's output and any error in ``log``.

    Raises:
        as :func:`compile_cubin` and :func:`disassemble`; the message is also in ``log``.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w", encoding="utf-8") as fh:
        try:
            usage = compile_cubin(source, kernel, arch, defines, cubin, resources, nvcc=nvcc, out=fh)
            disassemble(cubin, sass, cuobjdump=cuobjdump)
        except Exception as exc:
            print(f"error: {exc}", file=fh)
            raise
        print(f"{cubin}: {usage.registers} registers, {usage.shared_bytes} bytes smem; {sass} written", file=fh)
    return usage


def main(argv: list[str] | None = None) -> int:
    """``python -m analysis.gpu.build``: build and disassemble one kernel (rule build).

    A process that imports only this module starts in about 0.1 s; Snakemake's ``script:``
    and ``run:`` jobs start an interpreter with Snakemake itself (docs/benchmarks.md).
    """
    import argparse

    ap = argparse.ArgumentParser(prog="python -m analysis.gpu.build", description=main.__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, required=True)
    ap.add_argument("--kernel", required=True, help="the kernel's function name")
    ap.add_argument("--arch", required=True, help="e.g. sm_90")
    ap.add_argument("--cubin", type=Path, required=True)
    ap.add_argument("--resources", type=Path, required=True, help="ptxas resource report (JSON)")
    ap.add_argument("--sass", type=Path, help="cuobjdump -sass output; omit to skip disassembly")
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--nvcc", help="nvcc to use (default: found as analysis.tools.find_tool says)")
    ap.add_argument("--cuobjdump", help="cuobjdump to use")
    ap.add_argument("defines", nargs="*", help="-D build parameters")
    args = ap.parse_args(argv)
    try:
        if args.sass is None:
            args.log.parent.mkdir(parents=True, exist_ok=True)
            with open(args.log, "w", encoding="utf-8") as fh:
                compile_cubin(args.source, args.kernel, args.arch, args.defines, args.cubin, args.resources,
                              nvcc=args.nvcc, out=fh)
        else:
            build_kernel(args.source, args.kernel, args.arch, args.defines, args.cubin, args.resources, args.sass,
                         args.log, nvcc=args.nvcc, cuobjdump=args.cuobjdump)
    except AnalysisError as exc:
        print(f"error: {exc} (details: {args.log})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
