"""autotune_export.cuda.ttir.read_before_written: the pointer arguments a kernel loads from
before it stores through them (issue 21.9: an {output} bound to a fresh buffer that the kernel
reads first reads undefined contents). Hand-written TTIR, parsed by the installed Triton (no
compilation: the fast suite)."""

from __future__ import annotations

import pytest

from autotune_export.cuda import ttir as T

pytest.importorskip("triton")


def module(body: str, args: str = "%a: !tt.ptr<f32>, %b: !tt.ptr<f32>, %flag: i1") -> str:
    return f"module {{\n  tt.func public @k({args}) {{\n{body}\n    tt.return\n  }}\n}}\n"


def test_load_then_store_reads_first():
    # b += a: b is read before it is written (what a backward kernel accumulating into its
    # gradient does); a is only read.
    text = module("""
    %x = tt.load %a : !tt.ptr<f32>
    %y = tt.load %b : !tt.ptr<f32>
    %z = arith.addf %x, %y : f32
    tt.store %b, %z : !tt.ptr<f32>""")
    found = T.analyze(text)
    assert found.read_first == {0, 1} and found.written == {1}


def test_store_then_load_does_not():
    text = module("""
    %x = tt.load %a : !tt.ptr<f32>
    tt.store %b, %x : !tt.ptr<f32>
    %y = tt.load %b : !tt.ptr<f32>
    tt.store %b, %y : !tt.ptr<f32>""")
    assert T.analyze(text).read_first == {0}


def test_derived_pointer_in_a_loop():
    # The load of b + i comes first in the loop body: read before written on iteration 0.
    text = module("""
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %c4 step %c1 : i32 {
      %p = tt.addptr %b, %i : !tt.ptr<f32>, i32
      %y = tt.load %p : !tt.ptr<f32>
      %z = arith.addf %y, %y : f32
      tt.store %p, %z : !tt.ptr<f32>
    }""")
    assert T.analyze(text).read_first == {1}


def test_pointer_from_anywhere_reports_nothing():
    # A pointer loaded from memory may be any argument: neither reported nor cleared.
    text = module("""
    %bi = tt.bitcast %b : !tt.ptr<f32> -> !tt.ptr<i64>
    %j = tt.load %bi : !tt.ptr<i64>
    %p = tt.int_to_ptr %j : i64 -> !tt.ptr<f32>
    %y = tt.load %p : !tt.ptr<f32>
    tt.store %a, %y : !tt.ptr<f32>""")
    assert T.analyze(text).read_first == {1}
