"""A group's build time is linear in its size (issue 24 item 4): the benchmark and check entries'
dispatches, fixed to one variant, reach only that variant's export once iree-compile has
inlined the group's condition/fallback chain (docs/limits.md, "Build time of large groups").

With the fixed choice behind an optimization barrier (before), every one of the ~9 fixed
dispatches per variant kept the whole chain: 9 x N x N host blocks for N exports, and
iree-compile of the 64-config benchmark space (128 exports) ran for over an hour. The module
here is an RFC-form group of N trivial PTX kernels (nothing of Triton compiles); it goes
through ``--emit iree`` and iree-compile's phases up to ``hal`` (a few CPU-seconds at N = 8),
where each dispatch has become ``hal.executable.lookup.function`` of the export it runs."""

from __future__ import annotations

import re

from autotune_export.tools import cli

N = 8


def _group_module(n: int) -> str:
    """An executable of ``n`` exports ``@k_0 ... @k_{n-1}`` (one PTX object, entries that
    return), grouped as ``@k`` with a tuning workload, and a host function dispatching it."""
    entries = "".join(f".visible .entry k_{i}(.param .u64 a, .param .u64 b, .param .u32 n)\\0A{{\\0Aret;\\0A}}\\0A" for i in range(n))
    ptx = ".version 8.6\\0A.target sm_80\\0A.address_size 64\\0A" + entries
    exports = "".join(
        f"""  hal.executable.export public @k_{i} ordinal({i}) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {{
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  }} <{{workgroup_size = [128 : index, 1 : index, 1 : index]}}>
"""
        for i in range(n)
    )
    variants = ", ".join(f"@k_{i}" for i in range(n))
    return f"""#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex <{{objects = #hal.executable.objects<{{#hal.executable.target<"cuda", "cuda-nvptx-fb"> = [#hal.executable.object<{{path = "ex.ptx", data = "{ptx}"}}>]}}>}}> {{
  hal.executable.autotuning.export @k variants([{variants}]) tune_workload(tensor<4096xf32>)
{exports}}}
util.func public @host(%x: tensor<?xf32>) -> tensor<?xf32> {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %n_i32 = arith.index_cast %n : index to i32
  %y = flow.dispatch @ex::@k[%n](%x, %n_i32) : (tensor<?xf32>{{%n}}, i32) -> tensor<?xf32>{{%n}}
  util.return %y : tensor<?xf32>
}}
"""


def _functions(text: str) -> dict[str, str]:
    """The module's ``util.func`` bodies by name (from one ``util.func`` line to the next)."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"^\s*util\.func (?:public |private )?@([\w.$]+)\(", text, re.M)]
    return {name: text[a : (starts[i + 1][0] if i + 1 < len(starts) else len(text))] for i, (a, name) in enumerate(starts)}


def test_fixed_dispatches_reach_one_export_after_inlining(tmp_path):
    from iree.compiler.tools import compile_str

    src = tmp_path / "group.mlir"
    src.write_text(_group_module(N))
    lowered = tmp_path / "group.iree.mlir"
    assert cli.main([str(src), "--emit", "iree", "-q", "-o", str(lowered)]) == 0
    hal = compile_str(
        lowered.read_text(),
        extra_args=["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80", "--compile-to=hal"],
    ).decode()
    funcs = _functions(hal)
    looked_up = {name: re.findall(r"function\(@ex::@\w+::@(k_\d+)\)", body) for name, body in funcs.items()}
    for k in range(N):
        # 8 unrolled runs per loop iteration, each a dispatch of @k_K and nothing else.
        bench = looked_up[f"__autotune.ex.k.bench.{k}"]
        assert bench and set(bench) == {f"k_{k}"}, (k, bench)
        check = looked_up[f"__autotune.ex.k.check.{k}"]
        assert set(check) == {f"k_{k}"}, (k, check)
    # The live dispatch keeps the whole chain: one lookup per export, each once.
    assert sorted(looked_up["host"]) == sorted(f"k_{i}" for i in range(N))
