// Located errors of a generated config space, configs(product(...) where ...): at the name,
// value or constraint token that is wrong.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{constraint uses unknown name 'BLOCK_Z'; its names are the space's (BLOCK, num_warps) and num_stages, num_ctas (Triton's defaults); did you mean 'BLOCK'?}}
      configs(product(BLOCK in [64, 128], num_warps in [4, 8]) where BLOCK * num_warps >= 512 and BLOCK_Z < 2)
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{the constraint leaves no config of the 4 of product(...): 'BLOCK * num_warps > 1024' is false for every one}}
      configs(product(BLOCK in [64, 128], num_warps in [4, 8]) where BLOCK * num_warps > 1024)
      workload(n)
      grid(cdiv(n, BLOCK))
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{'BLOCK in []' gives no value: the space would be empty}}
      configs(product(BLOCK in [], num_warps in [4, 8]))
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+2 {{'BLOCK' is given twice in product(...)}}
      // expected-note @+1 {{first given here}}
      configs(product(BLOCK in [64], BLOCK = 128))
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{constraint uses 'OUT', whose value tl.float16 is not an integer; constraints compute on integers}}
      configs(product(BLOCK in [64, 128], OUT in [tl.float16, tl.float32]) where OUT > 1)
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{unexpected '=' in constraint; compare with '=='}}
      configs(product(BLOCK in [64, 128]) where BLOCK = 64)
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{division by zero in constraint ('% 0')}}
      configs(product(BLOCK in [64, 128], Z = 0) where BLOCK % Z == 0)
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{num_warps must be a power of two, got 6}}
      configs(product(BLOCK in [64, 128], num_warps in [4, 6]))
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{expected 'in' or '=' in configs(...), found '['}}
      configs(product(BLOCK [64, 128]))
      workload(n)
      grid(n)
}

// -----

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{grid uses unknown name 'BLOCK_N'}}
      configs(product(BLOCK in [64, 128])) workload(n) grid(cdiv(n, BLOCK_N))
}

// -----

// A product too large to enumerate (10^6 configs) is refused before the constraint runs.
hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("k.py", "k")
      signature(n: i32)
      // expected-error @+1 {{product(...) has 1000000 configs, more than 100000: give fewer values (the constraint filters the product after it is enumerated)}}
      configs(product(A in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], B in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], C in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
                      D in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], E in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], F in [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
              where A < 2)
      workload(n)
      grid(n)
}
