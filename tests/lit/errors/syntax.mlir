// Grammar errors in every clause of hal.executable.autotuning.export, reported at the
// offending token (or, when the token starts a new line, right after the previous one, as
// mlir-opt does), naming what was expected and the clause.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics

hal.executable.source private @e {
  // expected-error @+1 {{expected the group's symbol (@name) after 'hal.executable.autotuning.export'}}
  hal.executable.autotuning.export variants([@a, @b])
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected the group's symbol (@name)}}
  hal.executable.autotuning.export mm variants([@a, @b])
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{unknown clause 'varients' in hal.executable.autotuning.export; expected one of: variants, triton, kernel_source, signature,}}
  hal.executable.autotuning.export @g varients([@a])
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{duplicate clause 'variants'}}
  hal.executable.autotuning.export @g variants([@a]) variants([@b])
  // expected-note @-1 {{first given here}}
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      workload(n)
      grid(n)
      // expected-error @+1 {{duplicate clause 'workload'}}
      workload(n)
}

// -----

// variants: the list is bracketed.
hal.executable.source private @e {
  // expected-error @+1 {{expected '[' in variants(...), found '@a'}}
  hal.executable.autotuning.export @g variants(@a, @b)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected ',' or ']' in variants(...), found '@b'}}
  hal.executable.autotuning.export @g variants([@a @b])
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected a symbol (@name) or ']' in variants(...), found 'a'}}
  hal.executable.autotuning.export @g variants([a, @b])
}

// -----

// A missing ')' is reported where it belongs, at the end of the line, not at the '}'.
hal.executable.source private @e {
  // expected-error @+1 {{expected ')' in variants(...), found '}'}}
  hal.executable.autotuning.export @g variants([@a, @b]
}

// -----

// A clause keyword without its parentheses.
hal.executable.source private @e {
  // expected-error @+1 {{expected '(' after 'default'}}
  hal.executable.autotuning.export @g variants([@a]) default
}

// -----

// triton: two strings.
hal.executable.source private @e {
  // expected-error @+1 {{expected ',' in triton(...), found ')'}}
  hal.executable.autotuning.export @g triton("kernel.py")
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected a string in triton(...), found 'kernel.py'}}
  hal.executable.autotuning.export @g triton(kernel.py, "k")
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected ')' in triton(...), found 'signature'}}
  hal.executable.autotuning.export @g triton("kernel.py", "k"
      signature(n: i32) workload(n) grid(n)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{'add-kernel' is not a Python identifier}}
  hal.executable.autotuning.export @g triton("kernel.py", "add-kernel")
}

// -----

// signature: name ':' type [{output}].
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{expected ':' in signature(...), found 'i32'}}
      signature(x: *fp32, n i32)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{unknown Triton type '*float' for parameter 'x'; expected one of: *i1, *i8}}
      signature(x: *float, n: i32)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{unknown parameter flag 'out'; the only flag is 'output'}}
      signature(x: *fp32 {out}, n: i32)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      // expected-error @+1 {{expected ',', ')' or '{' in signature(...), found 'n'}}
      signature(x: *fp32 n: i32)
}

// -----

// configs: a bracketed list of {key = value} dictionaries.
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32)
      // expected-error @+1 {{expected 'product' or '[' in configs(...), found '{'}}
      configs({BLOCK = 128})
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32)
      // expected-error @+1 {{expected '=' in configs(...), found ':'}}
      configs([{BLOCK: 128}])
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32)
      // expected-error @+1 {{expected a value (integer, number, true, false, string, none or a Triton dtype such as tl.float16) in configs(...), found '@x'}}
      configs([{BLOCK = @x}])
}

// -----

// A config list spanning lines: the error is on the line of the unclosed config.
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32)
      // expected-error @+2 {{expected ',' or '}' in configs(...), found ']'}}
      configs([{BLOCK = 128},
               {BLOCK = 256])
}

// -----

// workload: names, comma-separated.
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32, m: i32)
      // expected-error @+1 {{expected ',' or ')' in workload(...), found 'm'}}
      workload(n m)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k")
      signature(n: i32)
      // expected-error @+1 {{expected a name or ')' in workload(...), found '4'}}
      workload(4)
}

// -----

// grid: expressions are checked by the grid grammar, at the exact column.
hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{unexpected ')' in grid expression}}
      grid(cdiv(n, ))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{unexpected '$' in grid expression}}
      grid(cdiv(n, 2) $ 3)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{unknown function 'ceil' in grid expression; the functions are cdiv, min and max}}
      grid(ceil(n, 2))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{expected ',' or ')' in grid(...), found '}'}}
      grid(cdiv(n, 4)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{a grid has 1 to 3 dimensions, got 4}}
      grid(n, 1, 1, 1)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g triton("kernel.py", "k") signature(n: i32) workload(n)
      // expected-error @+1 {{expected a grid expression in grid(...), found ')'}}
      grid(n,)
}

// -----

// tune_workload: tensor types and `number : type` values.
hal.executable.source private @e {
  // expected-error @+1 {{expected ',', ')' or ']' in tune_workload(...), found '3'}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<4xf32> 3 : i32)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected ':' in tune_workload(...), found 'i32'}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(3 i32)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{invalid type 'tensor<4xfoo>' in tune_workload(...): expected non-function type}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(tensor<4xfoo>)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{invalid value '4 : f32' in tune_workload(...): unexpected decimal integer literal for a floating point value; add a trailing dot}}
  hal.executable.autotuning.export @g variants([@a]) tune_workload(4 : f32)
}

// -----

// default: one symbol.
hal.executable.source private @e {
  // expected-error @+1 {{expected a symbol (@name) in default(...), found 'a'}}
  hal.executable.autotuning.export @g variants([@a]) default(a)
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected a symbol (@name) in default(...), found ')'}}
  hal.executable.autotuning.export @g variants([@a]) default()
}

// -----

hal.executable.source private @e {
  // expected-error @+1 {{expected ')' in default(...), found ','}}
  hal.executable.autotuning.export @g variants([@a, @b]) default(@a, @b)
}

// -----

// Quoted symbols and strings are MLIR string literals.
hal.executable.source private @e {
  // expected-error @+1 {{unknown escape '\q' in string literal; MLIR strings take}}
  hal.executable.autotuning.export @g variants([@"a\qb"])
}
