"""The program front door's reference computation and the runtime's accuracy rule, through a
real llvm-cpu .vmfb (docs/program.md, "The cross-check: accuracy against a reference"): an
fp16 matmul whose default (IREE's own code, accumulating in fp16 as linalg says) is off the
exact result; a more precise variant (f32 accumulation, what the Triton candidates compute)
is kept, a variant reading B transposed is dropped."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

CASES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "program", "reference_cases.mlir")


def _widen_all():
    """Per dispatch of the fixture: (reference_problem, the widened clone's text or None), and
    the host function's op count before and after (the clones are left in place)."""
    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.reference import reference_problem, widened
    from iree.compiler import ir

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(open(CASES).read())
        out = []
        for _host, _i, op in dispatch_ops(module):
            with ir.InsertionPoint(op):
                wide = widened(op, root_op)
            out.append((reference_problem(root_op(op)), None if wide is None else str(wide), str(op)))
        module.operation.verify()
        return out


def test_the_reference_dispatch_accumulates_in_f32_and_truncates_before_fused_consumers():
    """A transposed bf16 contraction with a fused bias add: the root becomes a generic over the
    same maps into an f32 fill, its inputs extended, its result truncated to bf16 and THAT feeds
    the bias add; the default's dispatch is left as it was."""
    problem, wide, original = _widen_all()[0]
    assert problem is None
    assert "tensor<32x48xf32>" not in original and "bf16 to f32" not in original  # default unchanged
    assert re.search(r"arith.extf %cst : bf16 to f32\n.*\n.*linalg.fill ins\(%\d+ : f32\) outs\(%\d+ : tensor<32x48xf32>\)", wide)
    assert "affine_map<(d0, d1, d2) -> (d1, d2)>" in wide  # B's transposed map kept
    body = re.search(r"\^bb0\(%in: bf16, %in_0: bf16, %out: f32\):(.*?)linalg.yield (%\d+) : f32", wide, re.S)
    assert body and body.group(1).count("bf16 to f32") == 2 and ": f32" in body.group(1)
    assert "bf16\n" not in body.group(1).replace("bf16 to f32", "")  # nothing computed in bf16
    trunc = re.search(r"(%\d+) = linalg.generic .*\n\s*\^bb0\(%in: f32, %out: bf16\):\n\s*%\d+ = arith.truncf %in : f32 to bf16", wide)
    assert trunc
    assert re.search(rf"ins\({trunc.group(1)}, %\d+ : tensor<32x48xbf16>, tensor<32x48xbf16>\)", wide)  # the bias add reads it


def test_no_reference_for_an_f32_accumulator():
    problem, wide, _ = _widen_all()[1]
    assert problem == "linalg.matmul accumulates in f32" and wide is None


def test_an_f32_accumulator_is_its_own_reference_and_says_so():
    """The explicit path for a root whose result is already f32: no reference is built, and the
    reflection's note says the default is its own reference (what inspect shows)."""
    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.reference import own_reference, reference_note
    from iree.compiler import ir

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(open(CASES).read())
        roots = [root_op(op) for _h, _i, op in dispatch_ops(module)]
        assert own_reference(roots[1]) == "linalg.matmul accumulates in f32, as precisely as the candidates"
        assert [own_reference(r) for r in (roots[0], roots[2], roots[3])] == [None, None, None]
        assert reference_note(roots[1], False, 3) == (
            "the default: linalg.matmul accumulates in f32, as precisely as the candidates, is its own reference "
            "(variants are compared with it)"
        )
        assert reference_note(roots[3], True, 3) == (
            "IREE's default with its linalg.conv_2d_nhwc_hwcf accumulating in f32, rounded to f16 "
            "(variants: no less accurate than the default against it)"
        )
        assert reference_note(roots[0], False, 1) == "none: one variant, nothing to cross-check"


def test_a_named_convolution_gets_the_maps_of_mlirs_generalization_and_an_f32_accumulator():
    """A named f16 convolution (no indexing maps of its own: strides 2, dilations 3 x 1) is
    rebuilt as a generic over the maps MLIR's linalg-generalize-named-ops gives it (the window
    loops d4, d5 scaled by the dilations, the output loops by the strides), accumulating in an
    f32 fill and truncated to f16 before the store; before, it got no reference."""
    problem, wide, original = _widen_all()[3]
    assert problem is None and wide is not None
    assert "linalg.conv_2d_nhwc_hwcf" in original and "f32" not in original
    assert "linalg.conv_2d_nhwc_hwcf" not in wide.split("linalg.fill ins(%cst")[-1]  # the root is rebuilt
    assert (
        "indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4 * 3, d2 * 2 + d5, d6)>, "
        "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>, "
        "affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], "
        'iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]'
    ) in wide
    assert re.search(r"linalg.fill ins\(%\d+ : f32\) outs\(%\d+ : tensor<2x4x5x16xf32>\)", wide)
    body = re.search(r"\^bb0\(%in: f16, %in_0: f16, %out: f32\):(.*?)linalg.yield %\d+ : f32", wide, re.S).group(1)
    assert body.count("f16 to f32") == 2 and re.search(r"arith.mulf .*: f32", body) and re.search(r"arith.addf .*: f32", body)
    trunc = re.search(r"(%\d+) = linalg.generic .*\n\s*\^bb0\(%in: f32, %out: f16\):\n\s*%\d+ = arith.truncf %in : f32 to f16", wide)
    assert trunc and f"tensor.store {trunc.group(1)}," in wide


def test_a_body_computing_in_f32_already_loses_its_truncf_and_extends_its_constant():
    """extf of an input stays, the truncf back to f16 inside the body goes (an identity now),
    an f16 constant is extended: no f16 arithmetic is left in the reduction."""
    problem, wide, _ = _widen_all()[2]
    assert problem is None
    body = re.search(r"\^bb0\(%in: f16, %in_0: f16, %out: f32\):(.*?)linalg.yield %\d+ : f32", wide, re.S).group(1)
    assert "truncf" not in body
    assert "arith.constant 2.000000e+00 : f16" in body and body.count("f16 to f32") == 3
    assert not re.search(r"arith\.(addf|mulf) .*: f16", body)

#: An fp16 matmul of a square B (so that a transposed read type-checks), K long enough for fp16
#: partial sums to round, an f32 one (no reference: its own, its variants are compared with the
#: default) and an fp16 convolution (IREE 3.13 generalizes it before dispatch creation; its
#: reference is built as a matmul's).
PROGRAM = """
func.func @main(%a: tensor<32x512xf16>, %b: tensor<512x512xf16>, %c: tensor<16x64xf32>, %d: tensor<64x24xf32>,
                %img: tensor<2x10x10x32xf16>, %w: tensor<3x3x32x16xf16>)
    -> (tensor<32x512xf16>, tensor<16x24xf32>, tensor<2x8x8x16xf16>) {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<32x512xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<32x512xf16>) -> tensor<32x512xf16>
  %m = linalg.matmul ins(%a, %b : tensor<32x512xf16>, tensor<512x512xf16>) outs(%f : tensor<32x512xf16>) -> tensor<32x512xf16>
  %z32 = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<16x24xf32>
  %f2 = linalg.fill ins(%z32 : f32) outs(%e2 : tensor<16x24xf32>) -> tensor<16x24xf32>
  %m2 = linalg.matmul ins(%c, %d : tensor<16x64xf32>, tensor<64x24xf32>) outs(%f2 : tensor<16x24xf32>) -> tensor<16x24xf32>
  %e3 = tensor.empty() : tensor<2x8x8x16xf16>
  %f3 = linalg.fill ins(%z : f16) outs(%e3 : tensor<2x8x8x16xf16>) -> tensor<2x8x8x16xf16>
  %cv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %w : tensor<2x10x10x32xf16>, tensor<3x3x32x16xf16>) outs(%f3 : tensor<2x8x8x16xf16>) -> tensor<2x8x8x16xf16>
  return %m, %m2, %cv : tensor<32x512xf16>, tensor<16x24xf32>, tensor<2x8x8x16xf16>
}
"""


def _transposed_b(dispatch):
    """A wrong variant: the root reads B[k, n] as B[n, k] (a transposed read)."""
    from autotune_export.program.dispatches import root_op
    from iree.compiler import ir

    clone = dispatch.clone()
    root = root_op(clone.operation)
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(root.attributes["indexing_maps"])]
    d = [ir.AffineDimExpr.get(i) for i in range(3)]
    maps[1] = ir.AffineMap.get(3, 0, [d[1], d[2]])
    root.attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps])
    return clone


@pytest.mark.integration
def test_a_more_precise_variant_is_kept_and_a_wrong_one_dropped(monkeypatch, tmp_path):
    import autotune_export.program.build as build
    from autotune_export.program.dispatches import root_op
    from autotune_export.program.reference import widened
    from autotune_export.runtime import AutotunedModule
    from autotune_export.runtime.checking import tolerances_of

    variants = build.TunableDispatch.variants

    def more(self):
        extra = [
            build.Variant(f"{self.export}.precise", [], lambda d: widened(d, root_op)),
            build.Variant(f"{self.export}.transposed", [], _transposed_b),
        ]
        return variants(self) + (extra if self.index == 0 else [])

    monkeypatch.setattr(build.TunableDispatch, "variants", more)
    got = build.build_program(PROGRAM, max_candidates=2)
    f16, f32, conv = (g for g in got.groups if g.host == "main")
    assert f16.variants[-2:] == [f"{f16.group}.precise", f"{f16.group}.transposed"]
    assert f16.reference == f"__autotune.{f16.executable}.{f16.group}.reference"
    assert f32.reference == ""  # an f32 accumulator: compared with the default, as before
    assert f32.reference_note.startswith("the default: linalg.matmul accumulates in f32")
    assert conv.reference == f"__autotune.{conv.executable}.{conv.group}.reference" and len(conv.variants) == 2
    path = tmp_path / "p.vmfb"
    path.write_bytes(got.vmfb)
    module = AutotunedModule(str(path), driver="local-task", cache=False, isolation="none")  # in this process
    fns = module.functions
    default, ref = fns[f16.check[0]](), fns[f16.reference]()
    precise, transposed = fns[f16.check[-2]](), fns[f16.check[-1]]()
    d, r, p = (x.to_host().astype(np.float64) for x in (default, ref, precise))
    # The reference is the exact sum rounded to fp16 (fake products are exact in f32), as the
    # precise variant's; IREE's default accumulates in fp16 and is off it.
    np.testing.assert_array_equal(p, r)
    assert np.abs(d - r).max() > 0.01, np.abs(d - r).max()
    # By the default-only rule (the bug) the precise variant differs from the default.
    assert int(fns[f16.compare](default, precise, *tolerances_of("float16"))) > 0
    info = module.group(f16.key)
    assert module._checks_out(info, len(f16.variants) - 2)
    assert not module._checks_out(info, len(f16.variants) - 1)
    assert module.dropped[f16.key] == {len(f16.variants) - 1}
    assert "less accurate than the default variant" in module.notes[f16.key]
    assert int(fns[f16.compare](ref, transposed, *tolerances_of("float16"))) > 100
    # Every IREE candidate of both groups still passes (the f32 group against its default).
    for group in (f16, f32):
        for k in range(1, len(group.variants) - (2 if group is f16 else 0)):
            assert module._checks_out(module.group(group.key), k), (group.key, k)
    # The convolution's reference: the same convolution (a wrong map would be off by about the
    # result's size), rounded once from an f32 sum; the default adds in fp16.
    c_def, c_ref = (fns[e]().to_host().astype(np.float64) for e in (conv.check[0], conv.reference))
    assert np.abs(c_ref).max() > 1 and np.abs(c_def - c_ref).max() <= 0.01 * np.abs(c_ref).max()
    assert module._checks_out(module.group(conv.key), 1)
    # inspect shows each group's reference (or that its default is its own), from the .vmfb and
    # from the regrouped MLIR (what --emit mlir writes).
    text = tmp_path / "p.mlir"
    text.write_text(got.mlir)
    for source in (path, text):
        proc = subprocess.run([sys.executable, "-m", "autotune_export.tools.cli", "inspect", str(source)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("  reference:")]
        assert lines == [
            f"  reference:   @{f16.reference}: IREE's default with its linalg.matmul accumulating in f32, rounded to f16 "
            "(variants: no less accurate than the default against it)",
            "  reference:   the default: linalg.matmul accumulates in f32, as precisely as the candidates, is its own "
            "reference (variants are compared with it)",
            f"  reference:   @{conv.reference}: IREE's default with its linalg.generic accumulating in f32, rounded to f16 "
            "(variants: no less accurate than the default against it)",
        ], proc.stdout
    # The same verdicts in the tuning worker (isolation="process": the rule runs there).
    worker = AutotunedModule(str(path), driver="local-task", cache=False, isolation="process")
    try:
        winfo = worker.group(f16.key)
        assert worker._checks_out(winfo, len(f16.variants) - 2)
        assert not worker._checks_out(winfo, len(f16.variants) - 1)
        assert "less accurate than the default variant" in worker.notes[f16.key]
    finally:
        worker.close_worker()


def _conv_nhwc_hwcf(img, w, strides, dilations):
    """numpy's ``linalg.conv_2d_nhwc_hwcf``: out[n, oh, ow, f] = sum over kh, kw, c of
    img[n, oh * sh + kh * dh, ow * sw + kw * dw, c] * w[kh, kw, c, f] (MLIR's definition)."""
    n, h, wd, _ = img.shape
    kh_, kw_, _, f = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, ow = (h - (kh_ - 1) * dh - 1) // sh + 1, (wd - (kw_ - 1) * dw - 1) // sw + 1
    out = np.zeros((n, oh, ow, f))
    for kh in range(kh_):
        for kw in range(kw_):
            window = img[:, kh * dh : kh * dh + (oh - 1) * sh + 1 : sh, kw * dw : kw * dw + (ow - 1) * sw + 1 : sw, :]
            out += np.einsum("nhwc,cf->nhwf", window, w[kh, kw])
    return out


#: An fp16 convolution with strides 2 and dilations 3 x 1. IREE 3.13 generalizes convolutions
#: before dispatch creation; the test puts the named op back into IREE's dispatch (as another IREE
#: release or flags may leave it) to check the reference of a named convolution.
NAMED_CONV = """
func.func @main(%img: tensor<2x13x11x8xf16>, %w: tensor<3x3x8x16xf16>) -> tensor<2x4x5x16xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x4x5x16xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<2x4x5x16xf16>) -> tensor<2x4x5x16xf16>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[3, 1]> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%img, %w : tensor<2x13x11x8xf16>, tensor<3x3x8x16xf16>) outs(%f : tensor<2x4x5x16xf16>) -> tensor<2x4x5x16xf16>
  return %c : tensor<2x4x5x16xf16>
}
"""


@pytest.mark.integration
def test_the_named_convolutions_reference_compiles_for_cpu_and_cuda_and_computes_the_convolution():
    """IREE's dispatch of NAMED_CONV with its root made the named convolution again (the
    bindings' linalg op builder), replaced by its reference, compiles from IREE's
    dispatch-creation phase for llvm-cpu and for CUDA (sm_89, IREE's own code generation); on
    the CPU it is numpy's convolution of the same data within an fp16 ulp and an f32 sum's error
    (an f32 sum rounded once), and the default (the named op, accumulating in fp16) is further off."""
    import iree.runtime as rt
    from iree.compiler import ir
    from iree.compiler.dialects import linalg as linalg_dsl
    from iree.compiler.tools import compile_str

    from autotune_export.program.dispatches import dispatch_ops, root_op
    from autotune_export.program.reference import widened

    cpu = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    cuda = ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_89"]
    rng = np.random.default_rng(0)
    img, w = rng.standard_normal((2, 13, 11, 8)).astype(np.float16), rng.standard_normal((3, 3, 8, 16)).astype(np.float16)
    exact = _conv_nhwc_hwcf(img.astype(np.float64), w.astype(np.float64), (2, 2), (3, 1))
    # One fp16 ulp (rounding once to fp16) plus the f32 sum's own error bound, gamma_K * sum
    # |a * b| with K = 3 * 3 * 8 terms (Higham, "Accuracy and Stability of Numerical Algorithms",
    # 3.1): results that cancel to near zero are off by more than their ulp in any f32 order.
    magnitude = _conv_nhwc_hwcf(np.abs(img.astype(np.float64)), np.abs(w.astype(np.float64)), (2, 2), (3, 1))
    bound = np.spacing(np.abs(exact).astype(np.float16)).astype(np.float64) + 72 * 2.0**-24 * magnitude
    for target in (cpu, cuda):
        dc = compile_str(NAMED_CONV, extra_args=[*target, "--compile-to=dispatch-creation"]).decode()
        texts = []
        with ir.Context() as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            module = ir.Module.parse(dc)
            ((_h, _i, op),) = dispatch_ops(module)
            generic = root_op(op)
            assert generic.name == "linalg.generic"  # IREE 3.13's generalization
            with ir.InsertionPoint(generic):
                named = linalg_dsl.conv_2d_nhwc_hwcf(
                    generic.operands[0], generic.operands[1], outs=[generic.operands[2]], strides=[2, 2], dilations=[3, 1]
                )
            generic.results[0].replace_all_uses_with(named)
            generic.erase()
            assert root_op(op).name == "linalg.conv_2d_nhwc_hwcf"
            texts.append(str(module))  # the default: the named op, fp16 accumulation
            with ir.InsertionPoint(op):
                wide = widened(op, root_op)
            op.results[0].replace_all_uses_with(wide.results[0])
            op.erase()
            module.operation.verify()
            texts.append(str(module))
        assert "linalg.conv_2d_nhwc_hwcf" not in texts[1] and "arith.truncf" in texts[1]
        runs = []
        for text in texts:
            vmfb = compile_str(text, extra_args=[*target, "--compile-from=dispatch-creation"])
            assert vmfb[:4] == b"PK\x03\x04"
            if target is cpu:
                context = rt.SystemContext(config=rt.Config("local-task"))
                context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
                runs.append(context.modules.module["main"](img, w).to_host().astype(np.float64))
        if target is cpu:
            default, reference = runs
            assert reference.shape == exact.shape == (2, 4, 5, 16)
            bad = np.abs(reference - exact) > bound
            assert not bad.any(), (reference[bad], exact[bad], bound[bad])
            assert np.abs(default - exact).max() > np.abs(reference - exact).max()
