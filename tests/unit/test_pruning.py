"""prune_configs_by (autotune_export/cuda/launch_model.py): the installed Triton's
Autotuner.prune_configs semantics, the export-time stand-ins, the jax-triton bridge's use of it, and the scalar values
materialize-triton-variants gives a pruner (issue 12, point 8). Nothing compiles here; the CLI
path with compiled variants is tests/lit/call_sites/prune_configs_by.mlir."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import triton

from autotune_export.cuda import launch_model as pruning

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _configs():
    return [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((128, 1), (256, 2), (512, 4), (1024, 4))]


def _cost(n, BLOCK, num_warps, **kw):
    return -(-n // BLOCK) + 100 * num_warps  # 612, 456, 528, 464 for n = 65536


def test_perf_model_top_k_fraction_count_and_order():
    named = {"n": 65536}
    out = pruning.prune_configs(_configs(), named, perf_model=_cost, top_k=0.5)
    assert [c.kwargs["BLOCK"] for c in out.kept] == [256, 1024] and out.kept_indices == [1, 3]  # lowest first
    assert [(p.index, p.by) for p in out.pruned] == [(0, "perf_model"), (2, "perf_model")]
    assert out.pruned[0].reason == "perf_model '_cost' estimates 612; top_k = 0.5 keeps the 2 lowest (up to 464)"
    assert out.estimates == {0: 612, 1: 456, 2: 528, 3: 464}
    # A count; a fraction that rounds to zero: the installed Triton's rule (test below).
    assert pruning.prune_configs(_configs(), named, perf_model=_cost, top_k=3).kept_indices == [1, 3, 2]
    # Not more configs than top_k: the model is not asked.
    assert pruning.prune_configs(_configs(), named, perf_model=lambda **kw: 1 / 0, top_k=4).kept_indices == [0, 1, 2, 3]
    with pytest.raises(pruning.PruneError, match=r"top_k = '2': Triton requires a float <= 1.0 or an int"):
        pruning.prune_configs(_configs(), named, perf_model=_cost, top_k="2")
    with pytest.raises(pruning.PruneError, match="top_k = 1.5"):
        pruning.prune_configs(_configs(), named, perf_model=_cost, top_k=1.5)
    with pytest.raises(pruning.PruneError, match="top_k = 0 keeps no config"):
        pruning.prune_configs(_configs(), named, perf_model=_cost, top_k=0)
    # A name given twice is Triton's TypeError (perf_model(**named_args, **kwargs, **config.all_kwargs())).
    with pytest.raises(pruning.PruneError, match="perf_model '_cost' would get argument 'BLOCK' twice"):
        pruning.prune_configs(_configs(), named, {"BLOCK": 128}, perf_model=_cost, top_k=1)


def _triton_kept(configs, named, early, top_k):
    """Triton's own answer: a real ``triton.autotune`` autotuner's ``prune_configs``, indices
    into ``configs``, lowest estimate first."""
    import triton.language as tl

    @triton.jit
    def kernel(x, n, BLOCK: tl.constexpr):
        pass

    tuner = triton.autotune(
        configs=configs, key=[], prune_configs_by={"early_config_prune": early, "perf_model": _cost, "top_k": top_k}
    )(kernel)
    tuner.nargs = dict(named)
    return [configs.index(c) for c in tuner.prune_configs({})]


@pytest.mark.parametrize("top_k", [0.5, 0.1, 0.25, 1.0, 2, 3])
def test_top_k_keeps_what_the_installed_triton_keeps(top_k):
    """Tester, Dec 2 trial 3, finding 7: Triton 3.6 takes a fraction of ALL the configs with no
    floor (0.5 of 8 with 5 left after early_config_prune: 4; 0.1: none, and Triton fails),
    3.9 of those left, at least one (2; 1). The launch model asked 3.9's rule under 3.6; now
    the installed Triton answers (CI runs this under both)."""
    configs = _configs() + [triton.Config({"BLOCK": b}, num_warps=w) for b, w in ((64, 1), (2048, 8), (32, 1), (4096, 8))]
    named = {"n": 65536}

    def early(cs, named_args, **kw):
        return [c for c in cs if c.kwargs["BLOCK"] >= 128][:5]

    expected = _triton_kept(configs, named, early, top_k)
    # The two rules as read in Triton's sources (3.6's autotuner.py: int(len(self.configs) *
    # top_k); 3.9's: max(1, int(len(pruned_configs) * top_k))), so the oracle itself is checked.
    major_minor = tuple(int(x) for x in triton.__version__.split(".")[:2])
    if isinstance(top_k, float) and major_minor in ((3, 6), (3, 9)):
        n_given, n_left = len(configs), 5
        k = int(n_given * top_k) if major_minor == (3, 6) else max(1, int(n_left * top_k))
        assert len(expected) == min(k, n_left)
    if not expected:  # Triton keeps none (3.6, a small fraction): it would fail at its first launch
        with pytest.raises(pruning.PruneError, match=f"top_k = {top_k} keeps no config"):
            pruning.prune_configs(configs, named, early_config_prune=early, perf_model=_cost, top_k=top_k)
        return
    out = pruning.prune_configs(configs, named, early_config_prune=early, perf_model=_cost, top_k=top_k)
    assert out.kept_indices == expected


def test_early_prune_then_perf_model_on_what_is_left():
    seen = {}

    def early(configs, named_args, **kwargs):
        seen["kwargs"] = kwargs
        return configs[1:]

    def model(**kw):
        seen.setdefault("model", []).append(sorted(kw))
        return _cost(**kw)

    out = pruning.prune_configs(_configs(), {"n": 65536}, {"EXTRA": 1}, early_config_prune=early, perf_model=model, top_k=1)
    assert out.kept_indices == [1]
    assert [(p.index, p.by) for p in out.pruned] == [(0, "early_config_prune"), (2, "perf_model"), (3, "perf_model")]
    assert seen["kwargs"] == {"EXTRA": 1}  # the launch's keyword arguments, as Triton passes them
    # named_args, the launch's kwargs and config.all_kwargs() (Triton's own list of options).
    assert {"BLOCK", "EXTRA", "n", "num_ctas", "num_stages", "num_warps"} <= set(seen["model"][0])
    assert set(seen["model"][0]) - {"BLOCK", "EXTRA", "n"} == set(_configs()[1].all_kwargs()) - {"BLOCK"}
    # jax-triton calls the early pruner without keyword arguments.
    pruning.prune_configs(_configs(), {"n": 1}, {"EXTRA": 1}, early_config_prune=early, early_kwargs={})
    assert seen["kwargs"] == {}


def test_early_prune_gets_copies_and_may_make_configs():
    given = _configs()

    def restage(configs, named_args, **kwargs):
        configs[0].num_stages = 2  # in place, as Triton's old matmul pruner did
        configs[0].kwargs["BLOCK"] = 64
        return [configs[0], triton.Config({"BLOCK": 2048}, num_warps=8)]

    out = pruning.prune_configs(given, {}, early_config_prune=restage)
    assert [(c.kwargs["BLOCK"], c.num_stages) for c in out.kept] == [(64, 2), (2048, 3)]
    assert out.kept_indices == [0, None]  # None: made by the pruner
    assert (given[0].kwargs["BLOCK"], given[0].num_stages) == (128, 3)  # the kernel's own configs are unchanged
    with pytest.raises(pruning.PruneError, match="early_config_prune '<lambda>' kept no config: Triton requires at least one"):
        pruning.prune_configs(given, {}, early_config_prune=lambda c, a, **k: [])
    with pytest.raises(pruning.PruneError, match="returned int, not a list of configs"):
        pruning.prune_configs(given, {}, early_config_prune=lambda c, a, **k: 3)
    with pytest.raises(pruning.PruneError, match="early_config_prune '<lambda>' raised ZeroDivisionError: division by zero"):
        pruning.prune_configs(given, {}, early_config_prune=lambda c, a, **k: 1 / 0)


def test_stand_ins_name_what_is_not_known():
    x = pruning.TensorArgument("x_ptr", "*fp16")
    assert x is not None and x.element_size() == 2
    n = pruning.UnknownScalar("n")

    def careful(configs, named_args, **kwargs):
        try:
            return [c for c in configs if c.kwargs["BLOCK"] <= named_args["n"]]
        except Exception:  # does not hide what the export does not know
            return configs

    for fn, name in (
        (careful, "n"),
        (lambda c, a, **k: [c[0]] * a["x_ptr"].shape[0], "x_ptr.shape"),
        (lambda c, a, **k: c[: int(a["n"])], "n"),
        (lambda c, a, **k: c if a["n"] else c, "n"),
        (lambda c, a, **k: c[: a["x_ptr"].stride(0)], "x_ptr.stride"),
    ):
        with pytest.raises(pruning.PruneError, match=f"reads argument '{name}', which is not known when exporting") as info:
            pruning.prune_configs(_configs(), {"x_ptr": x, "n": n}, early_config_prune=fn)
        assert info.value.unknown == name
    assert repr(n) == "<scalar n, not known when exporting>"
    assert (n is None, x is None) == (False, False)


def test_pruners_see_the_target_through_triton_s_driver():
    def by_target(configs, named_args, **kwargs):
        arch = triton.runtime.driver.active.get_current_target().arch
        smem = triton.runtime.driver.active.utils.get_device_properties(0)["max_shared_mem"]
        return [c for c in configs if c.kwargs["BLOCK"] * 256 <= smem] if arch >= 90 else configs[:1]

    # sm_90: 232448 bytes hold 512 * 256, not 1024 * 256.
    assert pruning.prune_configs(_configs(), {}, early_config_prune=by_target, capability=90).kept_indices == [0, 1, 2]
    assert pruning.prune_configs(_configs(), {}, early_config_prune=by_target, capability=80).kept_indices == [0]


def _fixture_kernels():
    spec = importlib.util.spec_from_file_location(
        "jax_fixture_kernels_for_pruning", ROOT / "tests" / "fixtures" / "jax" / "kernels.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


class _Spec:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)


def test_jax_triton_bridge_prunes_with_the_same_implementation(monkeypatch):
    from autotune_export.interop import jax_triton as jt

    kern = _fixture_kernels().scale_add_kernel  # configs BLOCK 128 w4, 256 w4, 512 w8, 1024 w8
    seen = []

    def model(n, BLOCK, num_warps, **kwargs):
        seen.append(kwargs.get("x_ptr").shape)  # jax-triton passes the arrays themselves
        return n // BLOCK + 10 * num_warps  # 72, 56, 88, 84

    monkeypatch.setattr(kern, "perf_model", model)
    monkeypatch.setattr(kern, "configs_top_k", 2)
    x = _Spec((4096,), "float32")
    text = jt.triton_call_to_mlir(x, x, 4096, np.float32(0.5), kernel=kern, out_shape=x, grid=(1,))
    assert "configs([{BLOCK = 256, num_warps = 4, num_stages = 3}" in text.replace("\n", " ")
    assert text.index("BLOCK = 256") < text.index("BLOCK = 128")  # Triton's order: lowest estimate first
    assert "BLOCK = 512" not in text and "BLOCK = 1024" not in text and seen == [(4096,)] * 4
    monkeypatch.setattr(kern, "early_config_prune", lambda configs, named_args: [])
    with pytest.raises(
        jt.JaxTritonError,
        match="prune_configs_by of the triton.autotune kernel 'scale_add_kernel': early_config_prune '<lambda>' kept no config",
    ):
        jt.triton_call_to_mlir(x, x, 4096, np.float32(0.5), kernel=kern, out_shape=x, grid=(1,))


WORKLOAD = """
hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(x_ptr: *fp32, a: i32, b: u32, c: i64, d: fp32, e: u1, f: i32, g: i32)
      workload(len)
      grid(len)
      tune_workload(tensor<4096xf32>, 7 : i32, 2.5 : f32)
}

util.func public @h(%x: tensor<?xf32>, %s: i32, %f: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %len = tensor.dim %x, %c0 : tensor<?xf32>
  %blocks = arith.ceildivsi %len, %c3 : index
  %a = arith.index_cast %blocks : index to i32
  %m1 = arith.constant -1 : i32
  %b = arith.muli %s, %m1 : i32
  %c = arith.extsi %b : i32 to i64
  %d = arith.mulf %f, %f : f32
  %e = arith.cmpi sgt, %s, %m1 : i32
  %g = arith.select %e, %s, %m1 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %a, %b, %c, %d, %e, %s, %g) : (tensor<?xf32>{%len}, i32, i32, i64, f32, i1, i32, i32) -> tensor<?xf32>{%len}
  util.return %y : tensor<?xf32>
}
"""


def test_scalars_the_tuning_workload_determines():
    from autotune_export.frontend.reader import SourceFile, find_groups, parse_source
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources
    from autotune_export.passes.dispatch_values import dispatch_scalars as _dispatch_scalars

    module = parse_source(SourceFile(WORKLOAD, "<test>", str(ROOT)))
    with module.context:
        (op,) = find_groups(module)
        group = AutotuneGroup.from_op(op, "<test>")
        (source,) = executable_sources(module)
        ((label, workload, known, from_workload, _),) = _dispatch_scalars(source, op, group)
    assert label == "dispatch 0 in @h (line 23)" and workload == 0
    assert from_workload == {"a", "b", "c", "d", "e", "f", "g"}  # the host's arguments are dynamic
    # a = cdiv(4096, 3); b = -7 read as u32; c = -7 as i64; d = 2.5 * 2.5; e = 7 > -1; f = 7 from
    # tune_workload; g = select(e, 7, -1).
    assert known == {"a": 1366, "b": (1 << 32) - 7, "c": -7, "d": 6.25, "e": True, "f": 7, "g": 7}


def test_scalars_of_each_tuning_workload():
    from autotune_export.frontend.reader import SourceFile, find_groups, parse_source
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources
    from autotune_export.passes.dispatch_values import dispatch_scalars as _dispatch_scalars

    text = WORKLOAD.replace(
        "tune_workload(tensor<4096xf32>, 7 : i32, 2.5 : f32)",
        "tune_workload([tensor<4096xf32>, 7 : i32, 2.5 : f32], [tensor<8192xf32>, 7 : i32, 2.5 : f32])",
    )
    module = parse_source(SourceFile(text, "<test>", str(ROOT)))
    with module.context:
        (op,) = find_groups(module)
        (source,) = executable_sources(module)
        sites = _dispatch_scalars(source, op, AutotuneGroup.from_op(op, "<test>"))
    # one launch per workload, each pruned with its own values: cdiv(4096, 3), cdiv(8192, 3)
    assert [label for label, *_ in sites] == [
        "dispatch 0 in @h (line 23), tune_workload 0",
        "dispatch 0 in @h (line 23), tune_workload 1",
    ]
    assert [site.values["a"] for site in sites] == [1366, 2731]
    assert all(site.values["f"] == 7 and site.values["d"] == 6.25 for site in sites)
    assert [site.dispatch for site in sites] == [0, 0]


TWO_DISPATCHES = """
hal.executable.source private @ex {
  hal.executable.autotuning.export @g
      triton("tests/lit/Inputs/pruned_kernels.py", "scale_unmasked")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, n: i32)
      workload(len)
      grid(cdiv(len, BLOCK))
}

util.func public @FIRST(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %len = arith.constant 65536 : index
  %n = arith.constant 65536 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<65536xf32>, i32) -> tensor<65536xf32>
  util.return %y : tensor<65536xf32>
}

util.func public @SECOND(%x: tensor<256xf32>) -> tensor<256xf32> {
  %len = arith.constant 256 : index
  %n = arith.constant 256 : i32
  %y = flow.dispatch @ex::@g[%len](%x, %n) : (tensor<256xf32>, i32) -> tensor<256xf32>
  util.return %y : tensor<256xf32>
}
"""


def _plan_two_dispatches(text):
    """materialize-triton-variants' plan stage on ``text``: ``(planned item, remark texts)``."""
    from autotune_export.frontend.reader import SourceFile, find_groups, parse_source
    from autotune_export.ir.group import AutotuneGroup
    from autotune_export.ir.walk import executable_sources
    from autotune_export.passes.base import PassContext
    from autotune_export.passes.materialize_triton_variants import MaterializeTritonVariants
    from autotune_export.cuda import triton_compile as tc

    module = parse_source(SourceFile(text, "<test>", str(ROOT)))
    remarks = []
    ctx = PassContext(source=SourceFile(text, "<test>", str(ROOT)), remark=remarks.append)
    with module.context:
        (op,) = find_groups(module)
        (source,) = executable_sources(module)
        group = AutotuneGroup.from_op(op, "<test>")
        item = MaterializeTritonVariants(target="sm_90")._plan(ctx, source, op, group, tc)
    return item, [r.message for r in remarks]


def _small_first(text):
    text = text.replace("@FIRST", "@TMP").replace("@SECOND", "@FIRST").replace("@TMP", "@SECOND")
    a, b = text.index("util.func public @SECOND"), text.index("util.func public @FIRST")
    return text[:a] + text[b:] + "\n" + text[a:b]


@pytest.mark.parametrize("order", ["big first", "small first"])
def test_pruning_runs_for_every_dispatch_of_the_group(order):
    """Issue 21.5: prune_configs_by ran on the first dispatch's values only, so configs the
    kernel's own pruner rejects for the second dispatch (BLOCK > n of an unmasked kernel) were
    compiled and selectable for it, and the outcome depended on the order of the functions.
    Each dispatch may run what its own pruning keeps (Triton prunes at every launch with its
    own arguments); the group compiles what some dispatch may run (main kept only what EVERY
    dispatch keeps, so the n = 65536 dispatch lost BLOCK = 512 and 1024, which Triton runs for
    it); remarks say what pruning saw and what each dispatch may run."""
    text = TWO_DISPATCHES if order == "big first" else _small_first(TWO_DISPATCHES)
    item, messages = _plan_two_dispatches(text)
    assert [dict(c)["BLOCK"] for c in item.configs] == [128, 256, 512, 1024]
    # the n = 256 dispatch, by its place in the module and its host's name
    small, host = (1, "@SECOND") if order == "big first" else (0, "@FIRST")
    # The n = 256 dispatch may run BLOCK 128 and 256 only: 512 and 1024 exceed its n.
    assert item.allowed == ((small, (0, 1)),)
    assert any("config 2 {BLOCK = 512" in m and "pruned for dispatch" in m for m in messages), messages
    saw = next(m for m in messages if " saw " in m)
    assert "n = 65536" in saw and "n = 256" in saw
    assert not any("keeps 2 of 4" in m for m in messages), messages
    assert any(f"dispatch {small} in {host}" in m and "may run only the group's configs 0, 1" in m for m in messages), messages


def test_a_dispatch_keeps_what_every_one_of_its_workloads_keeps():
    """A dispatch pruned on several tuning workloads may run what every one of them keeps
    (one guard per dispatch site); the other dispatch what its own pruning keeps."""
    from autotune_export.cuda import launch_model

    configs = _configs()
    tuner = launch_model.Autotune(
        tuple(launch_model.Config.of(c) for c in configs),
        tuple(configs),
        early_config_prune=lambda cs, a, **k: [c for c in cs if c.kwargs["BLOCK"] <= a["B"]],
    )
    out = launch_model.prune_per_site(configs, [{"B": 128}, {"B": 256}, {"B": 1024}], autotune=tuner, launches=[0, 1, 1])
    assert out.kept_indices == (0, 1)  # launch 1 keeps 128 and 256 on both of its workloads
    assert out.allowed == ((0,), (0, 1))


def test_each_launch_keeps_its_own_configs():
    """Two launches whose pruners keep disjoint configs: main refused the group ("no config
    is kept for every launch"); Triton runs config 0 at the first and config 1 at the second,
    and so does the group now. Several sites of ONE launch (its tuning workloads) that keep
    nothing in common are still an error: no variant may run at that dispatch."""
    from autotune_export.cuda import launch_model

    configs = _configs()
    tuner = launch_model.Autotune(
        tuple(launch_model.Config.of(c) for c in configs),
        tuple(configs),
        early_config_prune=lambda cs, a, **k: [c for c in cs if c.kwargs["BLOCK"] == a["B"]],
    )
    out = launch_model.prune_per_site(configs, [{"B": 128}, {"B": 256}], autotune=tuner)
    assert out.kept_indices == (0, 1) and out.allowed == ((0,), (1,))
    with pytest.raises(
        launch_model.LaunchModelError,
        match="no config is kept for every tuning workload of launch 0: site 0 keeps configs 0; site 1 keeps configs 1",
    ):
        launch_model.prune_per_site(configs, [{"B": 128}, {"B": 256}], autotune=tuner, launches=[0, 0])
    out = launch_model.prune_per_site(configs, [{"B": 128}, {"B": 128}], autotune=tuner)
    assert out.kept_indices == (0,) and out.allowed == ((0,), (0,))
