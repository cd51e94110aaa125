"""The racing search (the default) and the tie rule of the runtime, without timing anything:
given samples (:func:`race` takes a sampler), and the wall-clock sampler on a simulated clock
(each benchmark "call" advances time by its fixed cost plus its dispatches' cost)."""

from __future__ import annotations

import math
import time

import pytest

from autotune_export.runtime import timing, tuner
from autotune_export.runtime.profile import TuningProfile


def _given(samples_by_variant):
    """A sampler over given per-variant sample sequences (cycled); counts calls."""
    taken = [0] * len(samples_by_variant)

    def sample(k):
        seq = samples_by_variant[k]
        v = seq[taken[k] % len(seq)]
        taken[k] += 1
        return v

    return sample, taken


def test_no_variant_goes_before_three_samples_then_the_separated_leader_stops_the_race():
    """One or two samples never drop a variant (both calls may be late: MIN_SAMPLES_TO_DROP);
    at three, 1.5, 2.0 and 1.05 ms are separated from 1.0 ms (no spread: the 0.2% floor of the
    noise) and nothing more is timed. Before (Dec 2), round 0 alone dropped 1.5 and 2.0 ms."""
    assert timing.MIN_SAMPLES_TO_DROP == 3
    sample, taken = _given([[1.5], [1.0], [2.0], [1.05]])
    samples = timing.race(sample, 4)
    assert taken == [3, 3, 3, 3]
    assert tuner.pick([tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]).variant == "1"


def test_two_late_calls_do_not_drop_the_fastest_variant():
    """The fastest variant's first two samples 1.6x (two late calls in a row, as a third of one
    H200 run's calls were): kept, and its third sample wins. With a variant dropped on two
    samples, the race ended there on the 1.2 ms one."""
    sample, taken = _given([[1.2], [1.6, 1.6, 1.0], [1.5]])
    samples = timing.race(sample, 3)
    assert taken[1] >= 3
    assert tuner.pick([tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]).variant == "1"


def test_race_keeps_close_variants_and_drops_clear_losers():
    """Two noisy variants 0.5% apart stay in contention and get more rounds; the slow ones
    go at three samples."""
    sample, taken = _given([[2.0], [1.00, 1.03, 0.99, 1.02], [1.005, 0.98, 1.04, 1.01], [3.0]])
    samples = timing.race(sample, 4)
    assert taken[0] == taken[3] == 3
    assert min(taken[1], taken[2]) > 1
    assert all(len(s) == t for s, t in zip(samples, taken))


def test_one_slow_sample_does_not_drop_a_fast_variant():
    """A variant whose first sample is 5% slower than the leader's (a first call, host
    jitter) but whose others are the fastest stays in the race (its fastest sample bounds
    it) and wins."""
    sample, taken = _given([[1.0, 1.0, 1.001, 0.999], [1.05, 0.9, 0.9, 0.901]])
    samples = timing.race(sample, 2)
    assert taken[1] > 1
    assert tuner.pick([tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]).variant == "1"


def test_a_tie_is_settled_by_the_tie_rule_not_by_more_rounds():
    """Variants within TIE_TOLERANCE, measured finer than it, end the race; pick() prefers the
    earlier variant (so processes and ranks agree)."""
    sample, taken = _given([[1.004], [1.0], [1.5]])
    samples = timing.race(sample, 3)
    assert taken == [3, 3, 3]
    assert tuner.pick([tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]).variant == "0"


def test_a_whole_group_budget_stops_the_race_after_every_variant_had_a_sample():
    clock = [0.0]
    values = [[1.0, 1.3], [1.01, 0.8], [1.02, 1.1]]  # noisy: would need many rounds
    sample0, taken = _given(values)

    def sample(k):
        clock[0] += 10.0
        return sample0(k)

    samples = timing.race(sample, 3, budget_ms=15.0, spent_ms=lambda: clock[0])
    assert taken == [1, 1, 1]  # over budget after the first sample, but every variant got one
    assert [len(s) for s in samples] == [1, 1, 1]
    unlimited, taken2 = _given(values)
    timing.race(unlimited, 3)
    assert sum(taken2) > 3


def test_the_race_is_deterministic_on_given_samples():
    values = [[1.0, 1.02, 0.99], [1.01, 0.98, 1.03], [1.2, 1.21], [1.005, 1.0, 1.01]]
    runs = [timing.race(_given(values)[0], 4) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_contenders_rule_on_given_samples():
    """The elimination rule itself: with three samples, 1.0 ms (leader) vs 1.05 ms with no
    spread (the 0.2% floor of the noise) is out; vs 1.008 ms it is in (within the tie tolerance
    it could still win by the tie rule); with one late sample among three (the 90th percentile
    of the samples' excess over their variant's fastest is then 5.5%) 1.05 stays; with two
    samples nothing goes, even at 2x."""
    kept, settled = timing.contenders([[1.0] * 3, [1.05] * 3, [1.008] * 3], [0, 1, 2])
    assert kept == [0, 2] and settled  # the two left tie, measured finer than the tolerance
    kept, settled = timing.contenders([[1.0, 1.1, 1.0], [1.05, 1.06, 1.05]], [0, 1])
    assert kept == [0, 1] and not settled  # 5.5% noise: not separated yet
    kept, settled = timing.contenders([[1.0, 1.0], [2.0, 2.0]], [0, 1])
    assert kept == [0, 1] and not settled


def test_pick_ranks_by_the_fastest_sample():
    """Noise on a host clock only adds time: a variant's estimate is its fastest sample, so one
    with the lower floor wins even when its late calls give it the higher median (as on the
    H200's 8192x8192x128 run of Dec 2 06:58, where the ncu-fastest variant's calls came to 87,
    108 and 566 us per run)."""
    t = tuner.VariantTiming
    a, b = t("a", [0.100, 0.101, 0.103]), t("b", [0.087, 0.108, 0.566])
    assert a.median_ms < b.median_ms and b.estimate_ms == 0.087
    assert tuner.pick([a, b]).variant == "b"
    # a timing read back from the tuning cache ranks by its recorded estimate (older rows: the median)
    cached = t("c", [0.1], recorded=(0.095, 0.12), recorded_estimate=0.09)
    assert cached.estimate_ms == 0.09 and t("d", [0.1], recorded=(0.095, 0.12)).estimate_ms == 0.1
    assert tuner.pick([a, cached]).variant == "c"


@pytest.fixture
def clock(monkeypatch):
    state = {"now": 0.0}
    monkeypatch.setattr(time, "perf_counter", lambda: state["now"])
    return state


def _entries(clock, costs_ms, overhead_ms=0.05, unroll=8):
    """Benchmark entries: run(n) takes overhead + n * unroll * cost ms; records each call's n."""
    calls = [[] for _ in costs_ms]

    def make(k):
        def run(n):
            calls[k].append(n)
            clock["now"] += (overhead_ms + n * unroll * costs_ms[k]) / 1e3
        return run

    return [make(k) for k in range(len(costs_ms))], calls


def test_call_sampler_sizes_calls_from_the_kernel_time_and_removes_the_fixed_cost(clock):
    """One call size for every variant, from the first variant's time: calls of about 3 ms of
    it (ceil(3 / 0.16) = 19 iterations of 8 dispatches of 0.02 ms); a sample is a call over its
    runs during the race, and less_fixed takes each run's share of the 0.4 ms per call off."""
    costs = [0.02, 0.30, 2.0]  # ms per run: 0.16, 2.4 and 16 ms per iteration of 8 dispatches
    runs, calls = _entries(clock, costs, overhead_ms=0.4)
    sampler = timing.CallSampler(runs, 8, warmup_ms=5, call_ms=3.0)
    sampler.start()
    assert sampler.fixed == pytest.approx(0.4)
    raw = [[sampler.sample(k), sampler.sample(k)] for k in range(3)]
    for k, cost in enumerate(costs):
        assert raw[k] == pytest.approx([cost + 0.4 / 152] * 2)
    assert sampler.iters == {0: 19, 1: 19, 2: 19} and sampler.common == 19
    assert calls[1] == [19, 19] and calls[2] == [19, 19]  # no probe calls
    assert sampler.less_fixed(raw) == [pytest.approx([c, c]) for c in costs]
    assert sampler.fixed_used == pytest.approx(0.4)


def test_an_overestimated_fixed_cost_never_reorders_or_zeroes_the_samples(clock):
    """The warm-up's per-call cost came out 3.4 ms for calls of 2.2 ms on the H200 (a device
    still warming up): subtracted from every call, all read 0 and the tie rule picked the first
    variant. less_fixed takes at most half the fastest timed call, the same amount off every
    sample (one call size), so they stay positive and in order."""
    costs = [0.3, 0.2, 0.25]
    runs, calls = _entries(clock, costs, overhead_ms=0.5)
    sampler = timing.CallSampler(runs, 8, warmup_ms=5, call_ms=1.5)
    sampler.start()
    sampler.fixed = 10.0  # as the H200's warming device made it
    raw = [[sampler.sample(k)] for k in range(3)]
    out = sampler.less_fixed(raw)
    fastest = min(ms for _, _, ms in sampler.log[-3:])
    assert sampler.fixed_used == pytest.approx(fastest / 2)
    assert all(s[0] > 0 for s in out)
    assert sorted(range(3), key=lambda k: out[k][0]) == [1, 2, 0]


def test_wall_clock_race_finds_the_fastest_and_stops_timing_the_slow(clock):
    costs = [0.30, 0.10, 0.50, 0.1003, 0.90]
    runs, calls = _entries(clock, costs)

    class Info:
        unroll = 8

    profile = TuningProfile()
    samples = timing.WallClock(profile=profile).measure(Info, "w", list(range(5)), runs)
    timings = [tuner.VariantTiming(str(k), s) for k, s in enumerate(samples)]
    assert tuner.pick(timings).variant == "1"
    for k, cost in enumerate(costs):
        assert timings[k].median_ms == pytest.approx(cost, rel=1e-6)
    # Calls of one iteration for all (the first variant's is 2.45 ms, over 1.5); every variant
    # has three samples, and then the slow ones go and the two left tie (0.3% apart).
    assert [len(s) for s in samples] == [3] * 5
    assert {n for c in calls for n in c[-3:]} == {1}
    # The whole tuning: 34 ms of warm-up (two calls, then four pairs of calls of one and two
    # iterations for the fixed cost), then three rounds of one call each, 15.46 ms (Triton's
    # do_bench spends 125 ms per config: 625 ms here).
    round_ms = sum(0.05 + 8 * c for c in costs)
    assert clock["now"] * 1e3 == pytest.approx(2 * 2.45 + 4 * (2.45 + 4.85) + 3 * round_ms)
    assert profile.dispatches == sum(len(c) and sum(c) * 8 for c in calls)
    assert profile.kernel_ms == pytest.approx(sum(sum(c) * 8 * cost for c, cost in zip(calls, costs)), rel=1e-6)


def test_pick_prefers_the_earlier_variant_within_the_tie_tolerance():
    t = tuner.VariantTiming
    assert tuner.pick([t("a", [1.005]), t("b", [1.0]), t("c", [0.999])]).variant == "a"
    assert tuner.pick([t("a", [1.02]), t("b", [1.0])]).variant == "b"


def test_loop_bench_samples_per_run(clock):
    (run,), _ = _entries(clock, [0.25], overhead_ms=0.5)
    samples = tuner.loop_bench(run, unroll=8, warmup_ms=5, rep_ms=20)
    assert len(samples) >= 5 and all(s == pytest.approx(0.25, rel=1e-6) for s in samples)


def test_loop_bench_never_gives_a_sample_of_zero_when_the_base_call_came_late(clock):
    """Tester, Dec 2 trial 3, finding 6: the one-iteration ``base`` call measured late (here
    3 ms, under load) made ``run(iters) - base`` negative, clamped to 0 ms: a 0 median won the
    group. Now a call that the per-call cost makes up more than half of is made 4x longer and
    taken again, so samples stay positive and near the kernel's time."""
    state = {"late": 2}
    calls = []

    def run(n):
        calls.append(n)
        late = 3.0 if n == 1 and state["late"] > 0 else 0.0  # the two base calls come late
        if n == 1:
            state["late"] -= 1
        clock["now"] += (0.05 + late + n * 8 * 0.001) / 1e3

    samples = tuner.loop_bench(run, unroll=8, warmup_ms=1, rep_ms=2)
    assert samples and min(samples) > 0
    assert all(s == pytest.approx(0.001, rel=0.5) for s in samples)
    assert max(calls) > 100  # the calls were lengthened until the base was under half of one


def test_profile_phases_are_exclusive_and_add_up():
    p = TuningProfile()
    with p.phase("outer"):
        with p.phase("inner"):
            pass
        with p.phase("inner"):
            pass
    assert p.calls == {"outer": 1, "inner": 2}
    assert all(s >= 0 for s in p.seconds.values())
    text = p.report("t")
    assert text.startswith("t: ") and "outer" in text and "inner" in text and "x2" in text
    assert math.isclose(sum(p.seconds.values()), float(text.split()[1]), abs_tol=1e-3)


def test_wall_clock_race_keeps_to_its_default_budget(clock):
    """Ten variants within 1% of each other and 3% noisy call to call would race for all
    rounds; the default whole-group budget (20 ms per variant, warm-up included) ends it: a
    round that would overrun it takes only the leading variants whose calls fit, so it is
    never overrun by more than a call's measurement error."""
    calls = [0]

    def make(k):
        def run(n):
            calls[0] += 1
            jitter = 1.0 + 0.03 * ((calls[0] * 7919) % 11 - 5) / 5
            clock["now"] += (0.05 + n * 8 * 0.1 * (1 + k / 1000) * jitter) / 1e3
        return run

    class Info:
        unroll = 8

    samples = timing.WallClock().measure(Info, "w", list(range(10)), [make(k) for k in range(10)])
    assert all(samples)
    assert clock["now"] * 1e3 <= timing.AUTO_BUDGET_MS_PER_VARIANT * 10 * 1.01
    assert sum(map(len, samples)) > 20  # it did race past round 0


def test_call_sampler_skips_the_fixed_cost_call_when_one_iteration_is_long(clock):
    """A first variant whose one iteration lasts 16 ms (>= 4 calls of 3 ms): no bench(2) call,
    fixed cost 0 (it stays in every sample alike: 0.4 ms of 16 ms here)."""
    runs, calls = _entries(clock, [2.0, 0.3], overhead_ms=0.4)
    sampler = timing.CallSampler(runs, 8, warmup_ms=5, call_ms=3.0)
    sampler.start()
    assert sampler.fixed == 0.0 and calls[0] == [1, 1]
    assert sampler.sample(0) == pytest.approx(2.0 + 0.4 / 8) and sampler.common == 1


def _drifting_entries(clock, costs_ms, speed, overhead_ms=0.5, unroll=8):
    """Benchmark entries on a device whose speed drifts: a call's dispatches take ``speed(t)``
    times their cost, t the simulated ms at the call's start."""
    calls = [[] for _ in costs_ms]

    def make(k):
        def run(n):
            calls[k].append(n)
            clock["now"] += (overhead_ms + n * unroll * costs_ms[k] * speed(clock["now"] * 1e3)) / 1e3
        return run

    return [make(k) for k in range(len(costs_ms))], calls


def test_fixed_cost_from_calls_taken_in_turn_on_a_drifting_device(clock):
    """A device still speeding up during the warm-up (2x slow, back to full speed linearly over
    50 ms; the H200's warm-up calls in a process's first tuning were 1.4-1.5x slower than the
    probes after them): the fixed cost comes from calls of one and two iterations taken in turn,
    so the drift moves both alike: 0.70 ms for a true 0.5, where calls of two iterations taken
    after all those of one made it 0.92 ms; the calls (sized from the first variant: 0.72 ms of
    kernels per iteration at full speed, 3 ms calls) are at most 6 iterations long."""
    speed = lambda ms: 2.0 - 1.0 * min(ms, 50.0) / 50.0  # noqa: E731
    runs, calls = _drifting_entries(clock, [0.09, 0.1], speed)
    sampler = timing.CallSampler(runs, 8, warmup_ms=25, call_ms=3.0)
    sampler.start()
    assert 0.5 <= sampler.fixed < 0.72
    clock["now"] = 0.2  # past the drift
    sampler.sample(1)
    assert sampler.iters[1] <= 6


def test_warm_up_calls_then_pairs_for_the_fixed_cost(clock):
    """The warm-up: calls of one iteration, then four pairs of calls of one and two iterations
    (the fixed cost), which count towards warmup_ms as twelve calls of one iteration;
    :attr:`CallSampler.log` lists every call."""
    runs, calls = _drifting_entries(clock, [0.09], lambda ms: 1.0)
    sampler = timing.CallSampler(runs, 8, warmup_ms=25, call_ms=3.0)
    sampler.start()
    count = math.ceil(25 / (0.5 + 8 * 0.09))  # 21 calls of 1.22 ms
    assert calls[0] == [1] * (count - 12) + [1, 2] * 4
    assert [(k, n) for k, n, _ in sampler.log] == [(0, n) for n in calls[0]]
    assert sampler.log[-1][2] == pytest.approx(0.5 + 2 * 8 * 0.09)
    assert sampler.fixed == pytest.approx(0.5)


@pytest.mark.parametrize(
    "samples, median, p20, p80",
    [
        # tester session 4, finding 9: --json said median 0.010912 (the lower median), p20 0.012713, p80 0.018116
        ([0.019917, 0.010912], 0.0154145, 0.012713, 0.018116),
        ([3.0, 1.0, 10.0], 3.0, 1.8, 7.2),
    ],
)
def test_median_and_spread_follow_one_rule(samples, median, p20, p80):
    """A variant's median and p20-p80 come from one rule (the standard library's: median, and
    quantiles by linear interpolation), so the median is never outside its own range: with 2
    samples the lower median (the faster sample) was below the interpolated p20. tune's table
    (VariantTiming) and the report (report.summarize) agree."""
    from autotune_export.tools import report

    t = timing.VariantTiming("v", list(samples))
    lo, hi = t.spread_ms
    assert (t.median_ms, lo, hi) == pytest.approx((median, p20, p80), rel=1e-12)
    assert lo <= t.median_ms <= hi
    [stats] = report.summarize({"g": [t]})["g"]
    assert (stats.median_ms, stats.p20_ms, stats.p80_ms) == pytest.approx((median, p20, p80), rel=1e-12)
