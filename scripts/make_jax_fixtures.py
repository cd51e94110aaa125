"""Write the jax-triton StableHLO fixtures of tests/fixtures/jax/ (needs jax + jax-triton, no GPU).

Run it with an interpreter that has jax, a CUDA jaxlib plugin and jax-triton (NOT the
project's venv), for example::

    python3.12 -m venv /tmp/jaxvenv      # Python >= 3.12: jax-triton 0.4.1 (with jax 0.11)
    /tmp/jaxvenv/bin/pip install jax-triton "jax[cuda12-local]==0.11.*"
    /tmp/jaxvenv/bin/python scripts/make_jax_fixtures.py [--out tests/fixtures/jax]

(with Python 3.11 pip resolves jax-triton 0.3.1 and jax 0.10.2: ``pip install jax-triton
"jax[cuda12-local]"``). jax-triton 0.4.1 does not work with jax 0.12 (its DCE rule takes two
arguments, jax 0.12 passes three), hence the pin. Both generations are handled: the calls are
written as each one spells them (``out_shape`` / ``out_type``; an aliased output with its own
pointer in 0.3.x, as its input's pointer in 0.4.x).

No GPU is needed: every ``triton_call`` passes ``compute_capability=80`` and the export uses
``platforms=["cuda"]`` with the jax-triton custom call's safety check disabled
(notes/jax-triton-facts.md). jax-triton compiles every config of the autotuned kernel to PTX
at lowering time; the exported text embeds them in each call's ``backend_config``.

Outputs (``NAME`` per program below):

* ``NAME.stablehlo.mlir``: ``exported.mlir_module()`` as the installed jax-triton wrote it
  (0.3.x: ``stablehlo.custom_call @triton_kernel_call``, ``api_version = 2``,
  ``backend_config = "..."``; 0.4.x: ``@triton_kernel_call_ffi``, ``api_version = 4``,
  ``mhlo.backend_config = {opaque = "..."}``);
* with jax-triton 0.3.x, ``two_kernels_ffi.stablehlo.mlir``: the same calls respelled as
  0.4.x spells them, made by rewriting the attributes with jax's own MLIR bindings (the
  committed fixture; the protobuf is the one jax-triton 0.3.1 wrote);
* ``fixtures.json``: provenance (package versions, the command) and, per program, its inputs
  and the kernels it calls, so tests and the GPU check know what each fixture computes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "jax"))

N = 4096
CC = 80  # compute capability used for lowering (no GPU here)


def jax_triton_generation() -> tuple[int, int]:
    """(major, minor) of the installed jax-triton: (0, 3) or (0, 4)."""
    import importlib.metadata as md

    major, minor = md.version("jax-triton").split(".")[:2]
    return int(major), int(minor)


def programs(cc=CC):
    """name -> (function, input specs [(shape, dtype)], description).

    ``cc``: the compute capability jax-triton compiles for (None: the GPU's, on a GPU machine).
    The calls are spelled for the installed jax-triton (0.3.x or 0.4.x); both compute the same.
    """
    import warnings

    import jax
    import jax.numpy as jnp
    import numpy as np
    import triton
    import jax_triton as jt

    import kernels

    new = jax_triton_generation() >= (0, 4)
    # 0.4.x renamed out_shape to out_type and deprecated aliases/zeroed outputs (still served).
    out = "out_type" if new else "out_shape"
    warnings.filterwarnings("ignore", message=".*(deprecated|is deprecated).*", category=DeprecationWarning)

    def two_kernels(x, y):
        z = jt.triton_call(
            x, y, N, kernel=kernels.add_kernel,
            **{out: jax.ShapeDtypeStruct(x.shape, x.dtype)},
            grid=(triton.cdiv(N, 256),), compute_capability=cc, BLOCK=256,
        )
        return jt.triton_call(
            z, y, N, np.float32(0.5), kernel=kernels.scale_add_kernel,
            **{out: jax.ShapeDtypeStruct(x.shape, x.dtype)},
            grid=lambda meta: (triton.cdiv(N, meta["BLOCK"]),), compute_capability=cc,
        )

    def aliases_zeroed(x, y):
        total = jt.triton_call(
            x, N, kernel=kernels.row_sum_kernel,
            **{out: jax.ShapeDtypeStruct((1,), jnp.float32)},
            grid=(triton.cdiv(N, 1024),), zeroed_outputs=(0,), compute_capability=cc, BLOCK=1024,
        )
        # x += y into x's buffer: 0.3.x gives the aliased output a pointer of its own, 0.4.x
        # passes the input's pointer only.
        updated = jt.triton_call(
            x, y, N, kernel=kernels.add_into_kernel if new else kernels.add_inplace_kernel,
            **{out: jax.ShapeDtypeStruct(x.shape, x.dtype)},
            grid=(triton.cdiv(N, 512),), input_output_aliases={0: 0}, compute_capability=cc, BLOCK=512,
        )
        copied = jt.triton_call(
            updated, N, kernel=kernels.masked_copy_kernel,
            **{out: jax.ShapeDtypeStruct(x.shape, x.dtype)},
            grid=(triton.cdiv(N, 128),), compute_capability=cc, BLOCK=128,
        )
        return total, updated, copied

    f32 = [((N,), "float32"), ((N,), "float32")]
    return {
        "two_kernels": (two_kernels, f32, "z = add_kernel(x, y) (BLOCK=256); out = scale_add_kernel(z, y, scale=0.5) autotuned over 4 configs"),
        "aliases_zeroed": (aliases_zeroed, f32, "total = sum(x) into a zeroed output; updated = x + y aliasing x; copied = masked_copy(updated) with a heuristic"),
    }


def export_text(fn, specs, platforms=("cuda",)) -> str:
    import jax

    args = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in specs]
    exported = jax.export.export(
        jax.jit(fn),
        platforms=list(platforms),
        # jax-triton 0.3.x calls triton_kernel_call, 0.4.x triton_kernel_call_ffi
        disabled_checks=[jax.export.DisabledSafetyCheck.custom_call(t) for t in ("triton_kernel_call", "triton_kernel_call_ffi")],
    )(*args)
    return exported.mlir_module()


def to_ffi_spelling(text: str) -> str:
    """Respell 0.3.x calls the way 0.4.x emits them, with jax's MLIR bindings."""
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lib.mlir import ir

    with jmlir.make_ir_context():
        module = ir.Module.parse(text)

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for child in block.operations:
                        yield child.operation
                        yield from walk(child.operation)

        for op in walk(module.operation):
            if op.name != "stablehlo.custom_call":
                continue
            if ir.StringAttr(op.attributes["call_target_name"]).value != "triton_kernel_call":
                continue
            opaque = ir.StringAttr(op.attributes["backend_config"]).value_bytes
            op.attributes["call_target_name"] = ir.StringAttr.get("triton_kernel_call_ffi")
            op.attributes["api_version"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4)
            del op.attributes["backend_config"]
            op.attributes["mhlo.backend_config"] = ir.DictAttr.get({"opaque": ir.StringAttr.get(opaque)})
        return module.operation.get_asm(enable_debug_info=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(ROOT, "tests", "fixtures", "jax"))
    args = parser.parse_args(argv)
    import importlib.metadata as md

    os.makedirs(args.out, exist_ok=True)
    manifest = {
        "generated_by": "scripts/make_jax_fixtures.py",
        "python": platform.python_version(),
        "packages": {p: md.version(p) for p in ("jax", "jaxlib", "jax-triton", "triton", "jax-cuda12-plugin")},
        "compute_capability": CC,
        "programs": {},
    }
    spelling = "0.4" if jax_triton_generation() >= (0, 4) else "0.3"
    for name, (fn, specs, what) in programs().items():
        text = export_text(fn, specs)
        with open(os.path.join(args.out, f"{name}.stablehlo.mlir"), "w") as f:
            f.write(text)
        manifest["programs"][name] = {"inputs": [[list(s), d] for s, d in specs], "computes": what, "spelling": spelling}
        if name == "two_kernels" and spelling == "0.3":
            with open(os.path.join(args.out, f"{name}_ffi.stablehlo.mlir"), "w") as f:
                f.write(to_ffi_spelling(text))
            manifest["programs"][f"{name}_ffi"] = {
                "inputs": [[list(s), d] for s, d in specs], "computes": what, "spelling": "0.4 (respelled from 0.3)"}
        print(f"wrote {name}", file=sys.stderr)
    with open(os.path.join(args.out, "fixtures.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
