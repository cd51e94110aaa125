// Well-formed but meaningless extension ops, rejected by the front end before any pass runs.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics

hal.executable.source private @e {
  // expected-error @+1 {{@g needs variants([...]) or triton("file.py", "kernel")}}
  hal.executable.autotuning.export @g
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{give either variants([...]) or triton(...), not both}}
  hal.executable.autotuning.export @g variants([@a]) triton("kernel.py", "k")
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{variants([...]) lists no variant}}
  hal.executable.autotuning.export @g variants([])
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{variant @a is listed twice}}
  hal.executable.autotuning.export @g variants([@a, @b, @a])
  // expected-note @-1 {{first listed here}}
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{default(@c) is not one of the variants}}
  hal.executable.autotuning.export @g variants([@a, @b]) default(@c)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{'grid' only applies to the triton(...) form; the variants([...]) form takes its layout and workload from the exports}}
  hal.executable.autotuning.export @g variants([@a]) grid(n)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{@g: the triton(...) form needs a signature(...) clause}}
  hal.executable.autotuning.export @g triton("kernel.py", "k") workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{@g: the triton(...) form needs a grid(...) clause}}
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{empty kernel path in triton(...)}}
  hal.executable.autotuning.export @g triton("", "k") signature(n: i32) workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{parameter 'n' is declared twice}}
      signature(n: i32, x: *fp32, n: i32)
      // expected-note @-1 {{first declared here}}
      workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{'n' is marked {output} but is not a pointer}}
      signature(x: *fp32, n: i32 {output})
      workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      // expected-error @+1 {{'n' appears twice in workload(...)}}
      workload(n, n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(x: *fp32, n: i32)
      // expected-error @+1 {{workload value 'x' is a pointer; the workload is made of integer scalars}}
      workload(x)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      // expected-error @+1 {{configs([]) is empty: give at least one config}}
      configs([])
      workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      // expected-error @+1 {{config key 'BLOCK' is given twice}}
      configs([{BLOCK = 64, BLOCK = 128}])
      workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      // expected-error @+1 {{num_warps must be a power of two, got 3}}
      configs([{BLOCK = 64, num_warps = 3}])
      workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      // expected-error @+1 {{'num_stages' must be a positive integer}}
      configs([{BLOCK = 64, num_stages = 0}])
      workload(n) grid(n)
}

// -----

// Names in a grid: workload values, constants of every config, Triton options.
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      configs([{BLOCK = 64}])
      workload(n)
      // expected-error @+1 {{grid uses unknown name 'BLOCK_M'; names in a grid are workload values, config constants and num_warps}}
      grid(cdiv(n, BLOCK_M))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      configs([{BLOCK = 64}, {num_warps = 8}])
      workload(n)
      // expected-error @+1 {{grid uses unknown name 'BLOCK'; it is missing from some configs}}
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32, m: i32)
      workload(n)
      // expected-error @+1 {{grid uses 'm', which is not in workload(...); add it there to use it in the grid}}
      grid(n, m)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(x: *fp32, n: i32)
      workload(n)
      // expected-error @+1 {{grid uses 'x', which is a pointer}}
      grid(x)
}

// -----

// Division by a constant zero, with or without configs; the error points at the operator,
// also inside an expression that spans lines (no comments inside grid(...): there `//` is
// floor division).
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+2 {{division by zero in grid expression ('// 0')}}
      grid(cdiv(n,
                4) // 0)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32)
      configs([{BLOCK = 64}, {BLOCK = 0}])
      workload(n)
      // expected-error @+1 {{division by zero in grid expression (cdiv(..., 0)) for config {BLOCK = 0}}}
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{tune_workload values need a static shape (fake data is made of them), got tensor<?x4xf32>}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<?x4xf32>)
}

// -----

// Groups are symbols of their executable: unique among groups and exports.
hal.executable.source private @e {
  // expected-note @+1 {{@g is first defined here}}
  hal.executable.autotuning.export @g variants([@a])
  // expected-error @+1 {{redefinition of symbol @g in @e}}
  hal.executable.autotuning.export @g variants([@b])
}

// -----

#layout = #hal.pipeline.layout<constants = 1, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @e {
  // expected-error @+1 {{redefinition of symbol @a in @e}}
  hal.executable.autotuning.export @a variants([@a])
  // expected-note @+1 {{@a is first defined here}}
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %n, %c1, %c1 : index, index, index
  } <{workgroup_size = [32 : index, 1 : index, 1 : index]}>
}

// -----

// The op belongs directly in a hal.executable.source.
// expected-error @+1 {{hal.executable.autotuning.export must be directly inside a hal.executable.source, not the module}}
hal.executable.autotuning.export @g variants([@a])

// -----

util.func public @host(%n: i32) -> i32 {
  // expected-error @+1 {{hal.executable.autotuning.export must be directly inside a hal.executable.source, not util.func}}
  hal.executable.autotuning.export @g variants([@a])
  util.return %n : i32
}

// -----

hal.executable private @e {
  // expected-error @+1 {{hal.executable.autotuning.export must be directly inside a hal.executable.source, not hal.executable}}
  hal.executable.autotuning.export @g variants([@a])
}

// -----

// Inside comments and strings the op name is just text.
// hal.executable.autotuning.export @g variants(@a)
hal.executable.source private @e {
  // expected-error @+1 {{variants([...]) lists no variant}}
  hal.executable.autotuning.export @"hal.executable.autotuning.export" variants([])
}

// -----

// The generic form of the op, written by hand, gets the same checks.
hal.executable.source private @e {
  // expected-error @+1 {{invalid generic "autotune.export" op: variant @a is listed twice}}
  "autotune.export"() {sym_name = "g", variants = [@a, @a]} : () -> ()
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{generic "autotune.export" op without the attribute 'sym_name'; write the op as hal.executable.autotuning.export @name ...}}
  "autotune.export"() {variants = [@a]} : () -> ()
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{malformed generic "autotune.export" op: group @g carries attributes with no sugared spelling: ['colour']}}
  "autotune.export"() {sym_name = "g", variants = [@a], colour = "blue"} : () -> ()
}

// -----

// choices(...): a frozen per-workload table names variants of the group.
hal.executable.source private @e {
  // expected-error @+1 {{choices(...) picks @c, which is not one of the variants}}
  hal.executable.autotuning.export @g variants([@a, @b]) choices([8] = @a, [64] = @c)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{every workload of choices(...) must have the same number of values}}
  hal.executable.autotuning.export @g variants([@a, @b]) choices([8] = @a, [64, 2] = @b)
}

// -----

hal.executable.source private @e {
  // expected-note @+1 {{first given here}}
  hal.executable.autotuning.export @g variants([@a, @b]) choices([8] = @a,
      // expected-error @+1 {{workload [8] is given twice in choices(...)}}
      [8] = @b)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{choices(...) names variants: it applies to the variants([...]) form}}
  hal.executable.autotuning.export @g triton("k.py", "k") signature() grid(1) choices([8] = @a)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{every workload of tune_workload([...], [...]) must give one value per host argument (they differ in length)}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload([tensor<8xf32>], [tensor<8xf32>, 1 : i32])
}
