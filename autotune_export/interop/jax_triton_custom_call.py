"""What a jax-triton custom call (``stablehlo.custom_call @triton_kernel_call``) carries besides
its decoded descriptor (:mod:`.jax_triton_proto`): the descriptor's bytes in its
``backend_config`` (:func:`backend_bytes`), the outputs it writes in place of an operand
(:func:`aliases_of`), and each config's description, read into its items
(:func:`config_fields`) and into the suffix of its export's name (:func:`variant_suffix`).
"""

from __future__ import annotations

import re

from iree.compiler import ir

from autotune_export.interop.jax_triton_types import JaxTritonError

__all__ = ["backend_bytes", "aliases_of", "config_fields", "variant_suffix"]


def _attrs(op) -> dict:
    return {op.attributes[i].name: op.attributes[i].attr for i in range(len(op.attributes))}


def backend_bytes(op) -> bytes | None:

    attrs = _attrs(op)
    for key in ("backend_config", "mhlo.backend_config"):
        attr = attrs.get(key)
        if attr is None:
            continue
        if isinstance(attr, ir.StringAttr):
            return attr.value_bytes
        if isinstance(attr, ir.DictAttr):
            d = ir.DictAttr(attr)
            if "opaque" in d:
                return ir.StringAttr(d["opaque"]).value_bytes
    return None


#: Mnemonic of the elements of a custom call's ``output_operand_aliases``.
_ALIAS_ATTR = "#stablehlo.output_operand_alias<"


def aliases_of(op) -> dict[int, int]:
    """output index -> operand index, from the custom call's ``output_operand_aliases``.

    The attribute is an ``ArrayAttr`` (read with the bindings) of
    ``#stablehlo.output_operand_alias<output_tuple_indices = [i], operand_index = n,
    operand_tuple_indices = []>``. IREE's Python bindings have no StableHLO attribute classes,
    so the parameters of each element, the text between its ``<`` and the closing ``>``, are
    read as a builtin dictionary attribute (``ir.DictAttr`` of an ``ArrayAttr`` and an
    ``IntegerAttr``). An empty ``output_tuple_indices`` (a call with one, non-tuple result)
    means output 0. Raises JaxTritonError for an element of another kind.
    """

    attrs = _attrs(op)
    out: dict[int, int] = {}
    if "output_operand_aliases" not in attrs:
        return out
    with op.context:
        for elem in ir.ArrayAttr(attrs["output_operand_aliases"]):
            text = str(elem)
            if not (text.startswith(_ALIAS_ATTR) and text.endswith(">")):
                raise JaxTritonError(f"output_operand_aliases: expected {_ALIAS_ATTR}...>, got {text[:80]}")
            try:
                fields = ir.DictAttr(ir.Attribute.parse("{" + text[len(_ALIAS_ATTR) : -1] + "}"))
                outputs = (
                    [ir.IntegerAttr(i).value for i in ir.ArrayAttr(fields["output_tuple_indices"])]
                    if "output_tuple_indices" in fields
                    else []
                )
                operand = ir.IntegerAttr(fields["operand_index"]).value
            except (ir.MLIRError, KeyError, ValueError, TypeError):
                raise JaxTritonError(f"output_operand_aliases: cannot read {text[:120]}") from None
            out[outputs[0] if outputs else 0] = int(operand)
    return out


def config_fields(description: str) -> dict[str, str]:
    """The ``KEY: VALUE`` items of jax-triton's config description, in order.

    jax-triton describes each config of an autotuned call by Triton's ``str(triton.Config)``:
    ``"BLOCK: 128, num_warps: 4, num_ctas: 1, num_stages: 2, maxnreg: None"`` (the constexpr
    kwargs, then the options), items joined by ``", "``. Values are kept as text (stripped); an
    item without ``:`` or whose key is not an identifier is skipped, and a value holding a
    comma (a tuple) keeps only its first part.
    """
    out: dict[str, str] = {}
    for item in description.split(","):
        key, sep, value = item.partition(":")
        key = key.strip()
        if sep and key.isidentifier() and value.strip():
            out[key] = value.strip()
    return out


#: Config description keys that are Triton options, not constexpr values.
_OPTION_KEYS = (
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "ir_override",
    "num_buffers_warp_spec",
    "num_consumer_groups",
    "reg_dec_producer",
    "reg_inc_consumer",
)


def variant_suffix(description: str, k: int) -> str:
    """``0_128_w4_s2``: config ``k``'s suffix of its export name, from jax-triton's description
    (see :func:`config_fields`): ``k``, the constexpr values joined by ``x`` (``.`` spelled
    ``p``, ``-`` spelled ``m``, other non-alphanumerics dropped, ``None`` left out), then
    ``_wN`` / ``_sN`` for num_warps / num_stages. Just ``k`` when the description has no items."""
    pairs = config_fields(description)
    if not pairs:
        return str(k)
    consts = [v for key, v in pairs.items() if key not in _OPTION_KEYS]
    body = "x".join(re.sub(r"[^A-Za-z0-9]", "", c.replace(".", "p").replace("-", "m")) for c in consts if c not in ("None",))
    tail = "".join(f"_{t}{pairs[key]}" for key, t in (("num_warps", "w"), ("num_stages", "s")) if key in pairs)
    return f"{k}" + (f"_{body}" if body else "") + tail
