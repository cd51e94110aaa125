// Pass pipelines as mlir-opt spells them: name{option=value ...},name. An option given in the
// spec wins over the command's flag (--tuning-results here: that file does not exist); unknown passes and options are one-line
// errors, reported before the input is read, with exit status 1.
// RUN: autotune-export %s -p 'pin-variants{tuning-results=%S/Inputs/results.json}' --tuning-results=%S/does-not-exist.json | FileCheck %s
// RUN: autotune-export %s -p 'pin-variants{tuning-results="%S/Inputs/results.json"}' | FileCheck %s
// RUN: not autotune-export %s -p 'pin-variants{tuning-result=x.json}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not autotune-export %s -p 'pin-variant' 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not autotune-export %s -p 'pin-variants{' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not autotune-export %s -p 'materialize-triton-variants{use-cache=maybe}' 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not autotune-export %s -p 'pin-variants{tuning-results=a.json tuning-results=b.json}' 2>&1 | FileCheck %s --check-prefix=TWICE
// The options every pass takes are listed with --list-passes.
// RUN: autotune-export --list-passes | FileCheck %s --check-prefix=LIST

// CHECK:      hal.executable.autotuning.export @g
// CHECK-NEXT:   variants([@a, @b])
// CHECK-NEXT:   default(@b)
// OPTION: error: pass 'pin-variants' has no option 'tuning-result' (its options: tuning-results)
// PASS: error: unknown pass 'pin-variant'; known passes: emit-autotune-initializer, lower-autotuning-dispatch, materialize-triton-variants, pin-variants, split-architectures, verify-autotuning-groups
// SYNTAX: error: malformed pass pipeline 'pin-variants{'
// VALUE: error: option 'use-cache' of pass 'materialize-triton-variants' takes bool, got 'maybe'
// TWICE: error: option 'tuning-results' is given twice for pass 'pin-variants'
// LIST: materialize-triton-variants
// LIST-NEXT: options: target=sm_80 jobs=None object-format=ptx ptx-version=86 cache-dir=None use-cache=True
// LIST: split-architectures

#layout = #hal.pipeline.layout<constants = 0, bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  hal.executable.autotuning.export @g variants([@a, @b])
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
  hal.executable.export public @b ordinal(1) layout(#layout) count(%device: !hal.device) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
}
