"""The compile stage's records (:mod:`autotune_export.cuda.triton_compile`): a variant to compile
(:class:`VariantSpec`, checked on construction, with its cache key), and what compiling it
gives: PTX and metadata (:class:`CompiledVariant`) or the reason it cannot run under IREE
(:class:`PrunedVariant`). Plain data, pickled to the compile workers."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

import triton

from autotune_export.cuda import triton_compat as _compat
from autotune_export.cuda.kernel_files import KernelSource, plain_value
from autotune_export.cuda.targets import check_ptx_version, max_shared_memory
from autotune_export.cuda.variant_cache import CACHE_FORMAT
from autotune_export.ir.params import TorchDtype, TritonDtype


@dataclass(frozen=True)
class VariantSpec:
    """One variant to compile.

    ``signature`` lists (name, Triton type) for every runtime parameter in declaration order;
    these are the parameters of the PTX entry. Types: ``*fp16 *bf16 *fp32 *i8 ...`` for
    pointers, ``i1 i8 i16 i32 i64 u32 u64 fp16 bf16 fp32 fp64`` for scalars.
    ``constexprs`` gives a value (int, float, bool, str, None or a Triton dtype: a
    :class:`~autotune_export.ir.group.TritonDtype`, or a ``tl.dtype``, stored as one) to every
    ``tl.constexpr`` parameter. It may also give a value to a runtime parameter, which then
    leaves the signature: this is the JIT's specialization (Triton's JIT makes an int argument
    equal to 1 a constant, and an argument passed as None a constexpr None) and what lets
    Triton know that an inner stride is 1.
    ``divisibility`` holds indices into ``signature`` of parameters promised to be multiples of
    16 (pointers: 16-byte aligned); the code is only valid for such values.
    ``arch`` is the compute capability times ten (80, 86, 89, 90, 100: those of
    :mod:`autotune_export.cuda.targets`); 90 and 100 compile to sm_90a / sm_100a.
    ``ptx_version`` pins the PTX ISA of the output (86 means 8.6; None keeps Triton's default,
    which the CUDA 13.0 driver cannot JIT). ``num_warps``, ``num_stages``,
    ``num_ctas``, ``maxnreg`` are Triton's compile options.

    Raises ValueError on malformed fields (:class:`~autotune_export.cuda.targets.TargetError`, a
    ValueError, for an unsupported ``arch`` and for a ``ptx_version`` older than the ``arch``
    needs: :func:`~autotune_export.cuda.targets.check_ptx_version`). Lists are accepted and stored as tuples;
    divisibility is sorted."""

    kernel: KernelSource
    signature: tuple[tuple[str, str], ...]
    constexprs: tuple[tuple[str, object], ...]
    num_warps: int = 4
    num_stages: int = 3
    num_ctas: int = 1
    maxnreg: int | None = None
    arch: int = 80
    ptx_version: int | None = 86
    divisibility: tuple[int, ...] = ()

    def __post_init__(self):
        set_ = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731 (frozen)
        set_("signature", tuple((str(n), str(t)) for n, t in self.signature))
        set_("constexprs", tuple((str(n), plain_value(v)) for n, v in self.constexprs))
        set_("divisibility", tuple(sorted(set(self.divisibility))))
        names = [n for n, _ in self.signature] + [n for n, _ in self.constexprs]
        if len(set(names)) != len(names):
            raise ValueError(f"a parameter appears twice in the signature and constexprs: {names}")
        for name, value in self.constexprs:
            if value is not None and not isinstance(value, (int, float, bool, str, TritonDtype, TorchDtype)):
                raise ValueError(
                    f"constexpr {name} = {value!r}: expected int, float, bool, str, None, a Triton dtype or a torch dtype"
                )
        max_shared_memory(self.arch)  # validates arch
        check_ptx_version(self.ptx_version, self.arch)  # LLVM would abort the process
        for field in ("num_warps", "num_stages", "num_ctas"):
            if not isinstance(getattr(self, field), int) or getattr(self, field) < 1:
                raise ValueError(f"{field} = {getattr(self, field)!r}: expected a positive int")
        bad = [i for i in self.divisibility if not 0 <= i < len(self.signature)]
        if bad:
            raise ValueError(f"divisibility indices {bad} are outside the signature ({len(self.signature)} parameters)")

    def key(self, source_hash: str) -> str:
        """The cache key: a sha256 hex digest over the cache format, the Triton version,
        ``source_hash`` (:attr:`LoadedKernel.source_hash`), every field of the spec except the
        kernel's file path (the output depends on the source, not on where it lives), and the
        environment variables Triton lets change its output (line info is always disabled).
        A Triton dtype value enters as ``{"tl": "float16"}``, None as JSON null."""
        fields = dataclasses.asdict(self)
        fields["kernel"] = [self.kernel.name, self.kernel.embedded] if self.kernel.embedded else self.kernel.name
        fields["constexprs"] = [
            [n, {"tl": v.name} if isinstance(v, TritonDtype) else {"torch": v.name} if isinstance(v, TorchDtype) else v]
            for n, v in self.constexprs
        ]
        doc = {"format": CACHE_FORMAT, "triton": triton.__version__, "source": source_hash, "spec": fields, "env": compile_env()}
        return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


@dataclass
class CompiledVariant:
    """A compiled variant. ``metadata`` holds name (the PTX entry, the Python function's name:
    the same for every variant of a kernel), num_warps (launch with this one), num_ctas,
    num_stages, shared (dynamic shared memory bytes), global_scratch_size/_align and
    profile_scratch_size/_align (bytes per program), tmem_size, arch, ptx_version,
    triton_version, hash (Triton's), written_params: the indices into ``spec.signature`` of
    the pointer parameters the kernel may store through (from its TTIR, see
    :mod:`autotune_export.cuda.ttir`; every pointer when the TTIR cannot be analysed) and
    updated_params: those it may update atomically (none known without the TTIR),
    read_first_params: those it loads from before storing through them (none known without
    the TTIR), and
    addresses_from_data: how it makes pointers no parameter gives (refused by
    materialize-triton-variants), and n_regs / n_spills: registers per thread and Triton's
    spill count (local memory bytes per thread / 4) that ptxas gave the variant in
    ``triton.compile``'s cubin stage (:mod:`autotune_export.cuda.resources`; None when
    cuobjdump could not read them).
    ``cached`` is True when it came from our disk cache."""

    spec: VariantSpec
    ptx: str
    metadata: dict
    cached: bool


@dataclass
class PrunedVariant:
    """A variant that cannot run under IREE, with a one-line ``reason``. ``cacheable`` is
    False for a failure of the machine rather than of the variant (a worker that died, ptxas
    killed or crashing without a diagnostic, a file that could not be written): such a result
    is never written to the cache, so the next run compiles it again."""

    spec: VariantSpec
    reason: str
    cacheable: bool = True


def compile_env() -> dict[str, str]:
    """The environment variables that change what Triton compiles (those Triton's own cache key
    reads, :func:`autotune_export.cuda.triton_compat.cache_invalidating_env`; line info always
    disabled): part of :meth:`VariantSpec.key`."""
    env = _compat.cache_invalidating_env()
    env["TRITON_DISABLE_LINE_INFO"] = "true"
    return env
