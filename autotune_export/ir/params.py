"""The kernel side of a group, as plain data (no ``iree.compiler`` import: the kernel stages,
:mod:`autotune_export.cuda.launch_model`, :mod:`~autotune_export.cuda.triton_compile`,
:mod:`~autotune_export.cuda.abi` and :mod:`~autotune_export.cuda.bundle`, use it): a kernel's
runtime parameters (:class:`Param`), Triton dtypes as config values (:class:`TritonDtype`), the
config keys that are launch options (:data:`OPTION_NAMES`) and the name of a variant's export
(:func:`variant_name`). :mod:`autotune_export.ir.group` is the op that holds them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Config keys that are Triton compile options, not constexpr arguments (triton.Config fields).
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")
#: Triton's defaults of the options (``triton.Config``, the NVIDIA backend's options).
OPTION_DEFAULTS = {"num_warps": 4, "num_stages": 3, "num_ctas": 1, "maxnreg": None}

#: The signature type of a parameter the call passes ``None`` for (a constexpr None in Triton).
NONE_TYPE = "none"

#: Signature types of Triton tensor descriptors (host-side TMA descriptors), which IREE's
#: dispatch ABI cannot carry (:func:`descriptor_refusal`).
DESCRIPTOR_TYPES = ("tensordesc", "nvtmadesc")


def descriptor_refusal(name: str, type_: str) -> str | None:
    """Why parameter ``name`` of type ``type_`` cannot be exported when it is a tensor
    descriptor (``tensordesc<fp16[64, 64]>``, ``nvtmadesc``), else None."""
    if not type_.lower().startswith(DESCRIPTOR_TYPES):
        return None
    return (
        f"parameter '{name}' is a tensor descriptor ({type_}): on sm_90 Triton passes it as a by-value "
        "128-byte CUtensorMap made on the host, which IREE's dispatch ABI (buffer pointers and 32-bit "
        "constants) cannot carry; build it in the kernel with tl.make_tensor_descriptor"
    )


#: Every ``tl.dtype`` of ``triton.language`` (Triton 3.9): attribute name -> Triton's short
#: type name (``tl.float16.name``). ``tl.pointer_type`` values are not dtypes here.
TRITON_DTYPES: dict[str, str] = {
    "int1": "int1",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float8e5": "fp8e5",
    "float8e5b16": "fp8e5b16",
    "float8e4nv": "fp8e4nv",
    "float8e4b8": "fp8e4b8",
    "float8e4b15": "fp8e4b15",
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp64",
    "void": "void",
}
_DTYPE_BY_SHORT = {short: attr for attr, short in TRITON_DTYPES.items()}


@dataclass(frozen=True)
class TritonDtype:
    """A Triton dtype as a config value (``OUT_DTYPE = tl.float16``): ``name`` is its
    attribute of ``triton.language`` (``"float16"``, a key of :data:`TRITON_DTYPES`).
    Raises ValueError for another name. Spelled ``tl.float16`` (``str()``)."""

    name: str

    def __post_init__(self):
        if self.name not in TRITON_DTYPES:
            raise ValueError(
                f"unknown Triton dtype 'tl.{self.name}'; expected one of: " + ", ".join(f"tl.{n}" for n in TRITON_DTYPES)
            )

    @property
    def short(self) -> str:
        """Triton's own name of the dtype (``tl.float16.name``: ``"fp16"``)."""
        return TRITON_DTYPES[self.name]

    @classmethod
    def of(cls, value: Any) -> "TritonDtype | None":
        """The TritonDtype of a ``triton.language.dtype`` object (duck-typed: Triton is not
        imported here), None for anything else (pointer types included)."""
        if isinstance(value, cls):
            return value
        kind = type(value)
        if kind.__name__ != "dtype" or not kind.__module__.startswith("triton"):
            return None
        short = getattr(value, "name", None)
        return cls(_DTYPE_BY_SHORT[short]) if short in _DTYPE_BY_SHORT else None

    def __str__(self) -> str:
        return f"tl.{self.name}"


#: The ``torch`` dtypes a config value may be (``torch.float16``): those Triton's launcher maps
#: to a Triton type when a tensor has them (``triton._utils.type_canonicalisation_dict``).
TORCH_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
)


@dataclass(frozen=True)
class TorchDtype:
    """A ``torch`` dtype as a config value (a launch's ``DTYPE=torch.float16``, a heuristic
    returning ``x.dtype``): ``name`` is its attribute of ``torch`` (``"float16"``, one of
    :data:`TORCH_DTYPES`). Triton hands a torch dtype to the kernel unchanged (its binder passes
    a constexpr argument as given, ``triton/runtime/jit.py``): ``DT == torch.float16`` holds in
    the kernel and ``x.to(DT)`` does not compile, as in Triton; it is not a Triton dtype. Raises
    ValueError for another name. Spelled ``torch.float16`` (``str()``)."""

    name: str

    def __post_init__(self):
        if self.name not in TORCH_DTYPES:
            raise ValueError(
                f"unknown torch dtype 'torch.{self.name}'; expected one of: " + ", ".join(f"torch.{n}" for n in TORCH_DTYPES)
            )

    @classmethod
    def of(cls, value: Any) -> "TorchDtype | None":
        """The TorchDtype of a ``torch.dtype`` object (duck-typed: torch is not imported here),
        None for anything else (also a torch dtype outside :data:`TORCH_DTYPES`)."""
        if isinstance(value, cls):
            return value
        if type(value).__name__ != "dtype" or type(value).__module__ != "torch":
            return None
        name = str(value).removeprefix("torch.")
        return cls(name) if name in TORCH_DTYPES else None

    def __str__(self) -> str:
        return f"torch.{self.name}"


@dataclass
class Param:
    """One non-constexpr parameter of a Triton kernel: ``name: type [{output}]``.

    ``type`` is Triton's spelling (``*fp16`` pointer, ``i32`` scalar; see triton.compile's
    signature strings), or ``none`` (:data:`NONE_TYPE`) for an argument the call passes
    ``None`` for: Triton's JIT makes it a constexpr None, so it is neither a binding nor a
    constant. ``output`` marks a pointer whose buffer is a dispatch result.
    ``hint``: Triton AOT signature hint, 16 (divisible by 16), 1 (equal to 1) or 0 (none).
    """

    name: str
    type: str
    output: bool = False
    hint: int = 0

    @property
    def divisible(self) -> bool:
        return self.hint == 16

    @property
    def is_pointer(self) -> bool:
        return self.type.startswith("*")

    @property
    def is_none(self) -> bool:
        """The call passes ``None`` (a constexpr None in Triton's specialization)."""
        return self.type == NONE_TYPE

    def sugar(self) -> str:
        hint = f":{self.hint}" if self.hint else ""
        return f"{self.name}: {self.type}{hint}" + (" {output}" if self.output else "")


def _name_part(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, TritonDtype):
        return value.short
    if isinstance(value, TorchDtype):
        return "torch" + value.name.replace("_", "")
    return str(value)


def variant_name(group: str, index: int, config: list[tuple[str, Any]]) -> str:
    """Export (and PTX entry) name of config ``index``: ``matmul_3_128x256x64x8_w8_s3``.

    The constexpr values are joined in config order (``none`` for None, Triton's short name
    for a dtype: ``fp16``); ``w``/``s`` are num_warps/num_stages.
    """
    consts = [_name_part(v).replace(".", "p").replace("-", "m") for k, v in config if k not in OPTION_NAMES]
    opts = dict(config)
    tail = f"_w{opts.get('num_warps', 4)}_s{opts.get('num_stages', 3)}"
    body = "x".join(c for c in consts if c.replace("p", "").replace("m", "").isalnum())
    name = f"{group}_{index}" + (f"_{body}" if body else "") + tail
    return "".join(ch if (ch.isalnum() or ch == "_") else "_" for ch in name)
