"""Options reach passes by an explicit mapping (autotune_export.passes.PIPELINE_OPTIONS: the
command's flag -> pass options), held to the passes' dataclass fields: a renamed field, an
entry naming no option, or an option no flag reaches and no list calls spec-only fails loudly."""

from __future__ import annotations

import dataclasses

import pytest

from autotune_export.passes import (
    DEFAULT_PIPELINES,
    PASSES,
    PIPELINE_OPTIONS,
    SPEC_ONLY_OPTIONS,
    build_pipeline,
    check_options,
    pass_options,
)
from autotune_export.passes.materialize_triton_variants import MaterializeTritonVariants
from autotune_export.tools import cli


def test_mapping_matches_the_passes():
    """Every entry names a registered pass's option; every pass option is reached by a flag
    (or the Python API) or listed as spec-only."""
    assert check_options() == []
    reached = {t for o in PIPELINE_OPTIONS for t in o.sets} | SPEC_ONLY_OPTIONS
    assert reached == {(name, f.name) for name, cls in PASSES.items() for f in pass_options(cls)}


def test_every_flag_exists_on_the_command():
    flags = {s for action in cli._parser()._actions for s in action.option_strings}
    for option in PIPELINE_OPTIONS:
        assert option.flag is None or option.flag in flags, option


def _renamed(cls, old: str, new: str):
    """A copy of pass ``cls`` whose option field ``old`` is called ``new``."""
    fields = [(new if f.name == old else f.name, f.type, dataclasses.field(default=f.default)) for f in pass_options(cls)]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls.__mro__[1],),
                                      namespace={"name": cls.name, "summary": cls.summary, "apply": cls.apply})


def test_a_renamed_field_fails_loudly():
    passes = dict(PASSES)
    passes["materialize-triton-variants"] = _renamed(MaterializeTritonVariants, "ptx_version", "ptx_isa")
    problems = check_options(passes)
    assert problems == [
        "pipeline option 'ptx_version' names option 'ptx_version' of pass 'materialize-triton-variants', which has no such option",
        "OPTION_CHECKS names option 'ptx_version' of pass 'materialize-triton-variants', which has no such option",
        "option 'ptx_isa' of pass 'materialize-triton-variants' is set by no pipeline option and not listed in SPEC_ONLY_OPTIONS",
    ]


def test_unmatched_names_fail_loudly():
    passes = dict(PASSES)
    del passes["pin-variants"]
    assert check_options(passes) == [
        "pipeline option 'tuning_results' names pass 'pin-variants', which is not registered"]
    twice = PIPELINE_OPTIONS + (PIPELINE_OPTIONS[0],)
    assert check_options(PASSES, twice)[0] == "pipeline option 'target' is defined twice"
    assert check_options(PASSES, PIPELINE_OPTIONS, frozenset()) == [
        "option 'workload_slots' of pass 'emit-autotune-initializer' is set by no pipeline option and not listed in SPEC_ONLY_OPTIONS"]


def test_options_reach_their_passes():
    """A pipeline option sets the pass options its entry names, in every pass of the pipeline
    that has them; a spec's own value wins; an unknown keyword is refused."""
    passes = {p.name: p for p in build_pipeline(DEFAULT_PIPELINES["iree"], target="sm_90", use_cache=False,
                                                 tuning_results="r.json", jobs=3)}
    assert passes["materialize-triton-variants"].target == "sm_90"
    assert passes["verify-autotuning-groups"].target == "sm_90"
    assert (passes["materialize-triton-variants"].use_cache, passes["materialize-triton-variants"].jobs) == (False, 3)
    assert passes["pin-variants"].tuning_results == "r.json"
    (spec,) = build_pipeline("materialize-triton-variants{target=sm_80}", target="sm_90")
    assert spec.target == "sm_80"
    with pytest.raises(TypeError, match="unknown pipeline option.*ptx_isa"):
        build_pipeline(DEFAULT_PIPELINES["iree"], ptx_isa=86)


def test_malformed_spec_with_a_newline_is_one_line():
    """A spec is echoed escaped, so its diagnostic stays one line (fuzz.py's 20,000-case run of
    Dec 2 found a `// -----` line pasted into a -p spec printed over two lines)."""
    from autotune_export.passes.pipeline import parse_pipeline
    from autotune_export.support.diagnostics import DiagnosticError

    with pytest.raises(DiagnosticError) as err:
        parse_pipeline("zero-fill-outputs,ma// -----\nterialize-triton-variants")
    text = str(err.value)
    assert "\n" not in text.strip(), text
    assert "malformed pass pipeline 'zero-fill-outputs,ma// -----\\nterialize-triton-variants'" in text


@pytest.mark.parametrize("spec, message", [
    # Tester finding 08: 10^11 slots ran unbounded (481 MB, killed at 40 s); -1 gave 0 slots silently.
    ("emit-autotune-initializer{workload-slots=99999999999}",
     "option 'workload-slots' of pass 'emit-autotune-initializer': takes an integer in [0, 256]"),
    ("emit-autotune-initializer{workload-slots=-1}",
     "option 'workload-slots' of pass 'emit-autotune-initializer': takes an integer in [0, 256]"),
    ("materialize-triton-variants{max-variants=0}", "option 'max-variants' of pass 'materialize-triton-variants': "
                                                     "takes an integer >= 1, got 0"),
    ("materialize-triton-variants{max-spills=-1}", "option 'max-spills' of pass 'materialize-triton-variants': "
                                                    "takes an integer >= 0, got -1"),
    ("materialize-triton-variants{jobs=0}", "option 'jobs' of pass 'materialize-triton-variants': jobs = 0: at least 1"),
    ("materialize-triton-variants{ptx-version=5}", "PTX ISA version must look like 86 or 8.6, got '5'"),
])
def test_integer_options_out_of_range_are_refused_where_parsed(spec, message):
    from autotune_export.support.diagnostics import DiagnosticError

    with pytest.raises(DiagnosticError) as err:
        build_pipeline(spec)
    assert message in str(err.value)


def test_integer_options_in_range_and_keywords_are_checked_too():
    from autotune_export.support.diagnostics import DiagnosticError

    assert build_pipeline("emit-autotune-initializer{workload-slots=0}")[0].workload_slots == 0
    assert build_pipeline("emit-autotune-initializer{workload-slots=256}")[0].workload_slots == 256
    assert build_pipeline("materialize-triton-variants{ptx-version=8.6}")[0].ptx_version == 86
    with pytest.raises(DiagnosticError, match="option 'max-variants' .* takes an integer >= 1, got 0"):
        build_pipeline("materialize-triton-variants", max_variants=0)  # the Python API's keyword
