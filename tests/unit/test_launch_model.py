"""autotune_export/cuda/launch_model.py: Triton's launch semantics in one place (configs,
heuristics, prune_configs_by, defaults, Triton's and jax-triton's conventions). The Triton
behaviour each test pins was checked with Triton 3.9's interpreter (TRITON_INTERPRET=1): a
heuristic inside the autotuner overrides the config's value; one outside it, or a launch keyword
that a config sets, is ``ValueError: Conflicting meta-parameters``. Nothing compiles here."""

from __future__ import annotations

import pytest
import triton

from autotune_export.cuda import launch_model as lm
from autotune_export.ir.params import OPTION_DEFAULTS, OPTION_NAMES


def _model(*layers, constexprs=("V",), defaults=()):
    return lm.KernelModel("k", ("o_ptr", "n") + tuple(constexprs), tuple(constexprs), tuple(defaults), tuple(layers))


def _tuner(*values, **prune):
    configs = [triton.Config({"V": v}) for v in values]
    return lm.Autotune(tuple(lm.Config.of(c) for c in configs), tuple(configs), **prune)


def test_options_are_triton_config_s():
    assert lm.Config.OPTIONS == OPTION_NAMES
    assert lm.Config().options() == OPTION_DEFAULTS
    assert lm.Config.of(triton.Config({"B": 1}, num_warps=8)).options() == {**OPTION_DEFAULTS, "num_warps": 8}
    assert lm.Config.of(triton.Config({"B": 1})).all_kwargs() == {**triton.Config({"B": 1}).all_kwargs()}


def test_heuristic_inside_the_autotuner_overrides_the_config():
    model = _model(_tuner(1, 2), lm.Heuristics((("V", lambda args: args["n"] + 5),)))
    plan = lm.launch_variants(model, {"o_ptr": lm.TensorArgument("o_ptr", "*i32"), "n": 0})
    assert [dict(v.constexprs)["V"] for v in plan.variants] == [5, 5]
    assert [v.index for v in plan.variants] == [0, 1]
    # explicit configs (the CLI's configs([...])) keep their value
    plan = lm.launch_variants(model, {"o_ptr": None, "n": 0}, configs=[{"kwargs": {"V": 7}}])
    assert dict(plan.variants[0].constexprs)["V"] == 7


def test_heuristic_outside_or_keyword_set_by_a_config_conflicts():
    outside = _model(lm.Heuristics((("V", lambda args: 5),)), _tuner(1, 2))
    with pytest.raises(lm.LaunchModelError, match="Conflicting meta-parameters: V"):
        lm.launch_variants(outside, {"o_ptr": None, "n": 0})
    with pytest.raises(lm.LaunchModelError, match="Conflicting meta-parameters: V"):
        lm.launch_variants(_model(_tuner(1, 2)), {"o_ptr": None, "n": 0}, {"V": 3})
    with pytest.raises(lm.LaunchModelError, match="num_stages = 2 is given to the triton.autotune kernel 'k'"):
        lm.launch_variants(_model(_tuner(1, 2)), {"o_ptr": None, "n": 0}, {"num_stages": 2})
    # jax-triton keeps the configs that agree with the metaparameter instead
    plan = lm.launch_variants(_model(_tuner(1, 2)), {"o_ptr": None, "n": 0}, {"V": 2}, convention=lm.JAX_TRITON)
    assert [v.index for v in plan.variants] == [1]


def test_defaults_options_and_missing_constexprs():
    model = _model(constexprs=("V", "num_warps", "W"), defaults=(("W", 9),))
    plan = lm.launch_variants(model, {"o_ptr": None, "n": 0}, {"V": 1, "num_warps": 8})
    (v,) = plan.variants
    assert v.constexprs == (("V", 1), ("num_warps", 8), ("W", 9)) and v.config.num_warps == 8
    with pytest.raises(lm.LaunchModelError, match="gives no value for constexpr parameter 'V' of 'k'") as info:
        lm.launch_variants(model, {"o_ptr": None, "n": 0})
    assert info.value.stage == "constexpr"


def test_pruning_sees_the_keyword_arguments_in_triton_s_convention_only():
    seen = []

    def early(configs, named_args, **kwargs):
        seen.append(kwargs)
        return configs[:1]

    model = _model(_tuner(1, 2, **{"early_config_prune": early}), constexprs=("V", "S"))
    for convention in (lm.TRITON, lm.JAX_TRITON):
        plan = lm.launch_variants(model, {"o_ptr": None, "n": 0}, {"S": 4}, convention=convention)
        assert [v.index for v in plan.variants] == [0] and plan.pruning is not None
    assert seen == [{"S": 4}, {}]
