"""The Triton releases autotune-export compiles with, and what differs between them.

autotune-export compiles with the Triton the user has: any release from 3.6 (the one PyTorch
2.11 pins) through 3.9 (``pyproject.toml``: ``triton>=3.6,<3.10``). Every call into Triton's
compiler API goes through this module, so a difference between releases is handled here and
nowhere else. Checked against the sources and wheels of 3.6.0, 3.7.1, 3.8.0 and 3.9.0 (no GPU):

* the same in all four: ``ASTSource(fn, signature, constexprs, attrs)`` with the signature keyed
  by parameter name over ALL parameters (constexprs typed ``"constexpr"``), constexprs by name,
  attributes keyed by ``(index into all parameters,)`` -> ``[["tt.divisibility", 16]]``;
  ``GPUTarget("cuda", arch, 32)``; the ``CUDAOptions`` fields passed (``num_warps``,
  ``num_stages``, ``num_ctas``, ``maxnreg``, ``ptx_version``, ``enable_fp_fusion``);
  ``knobs.cache.dir`` / ``knobs.compilation.disable_line_info`` with ``scope()``;
  ``triton._C.libtriton.get_cache_invalidating_env_vars``; ``compiled.asm`` keys ``ttir``,
  ``ttgir``, ``llir``, ``ptx``, ``cubin``; the ``compiled.metadata`` fields read
  (:data:`METADATA_FIELDS`); the TTIR bindings :mod:`autotune_export.cuda.ttir` uses;
* what differs, and how it is handled:

  - block pointers (``tl.make_block_ptr``, ``tl.advance``) compile with 3.6 to 3.8 and were
    removed in 3.9 (tensor descriptors instead): :func:`explain_compile_error` says so when a
    config fails on 3.9 for that reason;
  - ``enable_fp_fusion`` left out means on in 3.6 to 3.8, off (with a warning) in 3.9:
    :func:`compile_ast` always passes it (True, the JIT's default up to 3.8), so a variant
    computes the same with every release;
  - the bundled ``ptxas`` (sm_80) is CUDA 12.8 (PTX ISA up to 8.7) in 3.6 and 3.7, CUDA 12.9
    (up to 8.8) in 3.8 and 3.9; LLVM's PTX feature level is capped at 8.6 in 3.6 and at 9.0 later. The
    PTX ISA of a variant is pinned (``ptx_version``, default 8.6, which every one of them
    assembles), so its header does not follow the release;
  - scratch sizes in the metadata: :func:`metadata` reads a missing or None field as its
    neutral value (size 0, alignment 1);
  - TTIR prints a host tensor descriptor as ``!tt.tensordesc<tensor<32x32xf32>>`` in 3.6 and
    ``!tt.tensordesc<32x32xf32>`` in 3.9 (:mod:`autotune_export.cuda.ttir` matches both).

Cache entries are keyed by the Triton version
(:meth:`autotune_export.cuda.triton_compile.VariantSpec.key`): output of two releases never mixes.

Raises nothing at import for a release outside the range; :func:`supported` says whether it is
one, and :func:`compile_ast` warns once (RuntimeWarning) before compiling with it.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from typing import Any, Iterator

import triton
from triton import knobs
from triton._C.libtriton import get_cache_invalidating_env_vars
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

__all__ = [
    "MIN_VERSION",
    "MAX_VERSION",
    "METADATA_FIELDS",
    "VERSION",
    "cache_invalidating_env",
    "compile_ast",
    "compile_settings",
    "explain_compile_error",
    "metadata",
    "parse_version",
    "supported",
]

#: The oldest supported release (inclusive) and the first unsupported one, as (major, minor).
MIN_VERSION = (3, 6)
MAX_VERSION = (3, 10)

#: Compiled-metadata fields copied into a variant's metadata (all JSON scalars or lists).
METADATA_FIELDS = (
    "name",
    "num_warps",
    "num_ctas",
    "num_stages",
    "shared",
    "global_scratch_size",
    "global_scratch_align",
    "profile_scratch_size",
    "profile_scratch_align",
    "tmem_size",
    "ptx_version",
    "triton_version",
    "hash",
    "launch_cooperative_grid",
    "launch_pdl",
    "tensordesc_meta",
)

# Values of fields a release may leave out or set to None (scratch sizes in bytes: 0 means none).
_METADATA_DEFAULTS = {
    "global_scratch_size": 0,
    "global_scratch_align": 1,
    "profile_scratch_size": 0,
    "profile_scratch_align": 1,
    "tmem_size": 0,
    "launch_cooperative_grid": False,
    "launch_pdl": False,
}


def parse_version(text: str) -> tuple[int, int, int]:
    """``"3.6.0"`` -> ``(3, 6, 0)``; suffixes (``+git...``, ``rc1``) are ignored, missing parts
    are 0. Raises ValueError when the text does not start with a number."""
    m = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text.strip())
    if m is None:
        raise ValueError(f"not a version: {text!r}")
    return tuple(int(g or 0) for g in m.groups())  # type: ignore[return-value]


#: The installed Triton's version as (major, minor, patch).
VERSION = parse_version(triton.__version__)


def supported(version: tuple[int, ...] = VERSION) -> bool:
    """Whether ``version`` (default: the installed Triton's) is in [:data:`MIN_VERSION`,
    :data:`MAX_VERSION`)."""
    return MIN_VERSION <= tuple(version[:2]) < MAX_VERSION


_warned = False


def _warn_unsupported() -> None:
    global _warned
    if _warned or supported():
        return
    _warned = True
    lo, hi = MIN_VERSION, (MAX_VERSION[0], MAX_VERSION[1] - 1)
    warnings.warn(
        f"autotune-export is tested with Triton {lo[0]}.{lo[1]} through {hi[0]}.{hi[1]}; "
        f"compiling with Triton {triton.__version__}",
        RuntimeWarning,
        stacklevel=3,
    )


def cache_invalidating_env() -> dict[str, str]:
    """The environment variables Triton lets change its output, with their values (part of a
    variant's cache key)."""
    return dict(get_cache_invalidating_env_vars())


@contextlib.contextmanager
def compile_settings(cache_dir: str) -> Iterator[None]:
    """Triton's own cache in ``cache_dir`` and no line info while compiling; Triton's settings
    are restored on exit. The settings are process-wide: the caller serializes compilations."""
    with knobs.cache.scope(), knobs.compilation.scope():
        knobs.cache.dir = cache_dir
        knobs.compilation.disable_line_info = True
        yield


def compile_ast(
    fn, signature: dict[str, str], constexprs: dict[str, Any], divisible: list[int], arch: int, options: dict[str, Any]
):
    """``triton.compile`` of the JIT function ``fn`` for CUDA compute capability ``arch`` (80,
    90, ...; warp size 32), with no GPU and no driver. ``signature``: every parameter name ->
    Triton type (``*fp16``, ``i32``; ``"constexpr"`` for constexprs and specialized
    parameters); ``constexprs``: name -> value; ``divisible``: indices into ALL parameters of
    those promised to be multiples of 16; ``options``: ``CUDAOptions`` fields
    (``enable_fp_fusion`` defaults to True here, whatever the release's default). Returns
    Triton's compiled kernel; raises whatever ``triton.compile`` raises
    (``CompilationError``, ``RuntimeError`` from ptxas, ...)."""
    _warn_unsupported()
    attrs = {(i,): [["tt.divisibility", 16]] for i in divisible}
    options = {"enable_fp_fusion": True, **options}
    return triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", arch, 32), options=options)


def metadata(compiled) -> dict[str, Any]:
    """The :data:`METADATA_FIELDS` of a compiled kernel's metadata (None for a field this
    release does not have, the documented default for a scratch/launch field it leaves empty),
    plus ``arch`` (the compute capability compiled for). Values are as Triton gives them
    (tuples, objects): the caller makes them JSON."""
    md = compiled.metadata
    out = {}
    for name in METADATA_FIELDS:
        value = getattr(md, name, None)
        out[name] = _METADATA_DEFAULTS.get(name) if value is None else value
    out["arch"] = md.target.arch
    return out


_BLOCK_POINTERS = re.compile(r"block pointer|make_block_ptr|\badvance\b", re.IGNORECASE)


def explain_compile_error(message: str) -> str:
    """``message`` (one line about a failed compilation) with a hint where the cause is the
    Triton release: block pointers, removed in Triton 3.9."""
    if VERSION[:2] >= (3, 9) and _BLOCK_POINTERS.search(message):
        return (
            f"{message}; Triton {triton.__version__} has no block pointers (removed in 3.9): "
            "port the kernel to tl.make_tensor_descriptor, or compile with triton>=3.6,<3.9"
        )
    return message
