// Integers past 2^63 in the op's clauses are located errors (they were internal errors: the
// i64 attribute could not be built). Workload values and result indices are i64.
// RUN: autotune-export %s -p pin-variants --split-input-file --verify-diagnostics

#layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  // expected-error @+1 {{workload value 18446744073709551616 in choices(...) does not fit in a 64-bit signed integer (the dispatch's workload values are i64)}}
  hal.executable.autotuning.export @g variants([@a]) choices([4, 18446744073709551616] = @a)
  hal.executable.export public @a ordinal(0) layout(#layout)
}

// -----

#layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  // expected-error @+1 {{result index 9223372036854775808 in reset_to_zero(...) does not fit in a 64-bit signed integer}}
  hal.executable.autotuning.export @g variants([@a]) reset_to_zero(0, 9223372036854775808)
  hal.executable.export public @a ordinal(0) layout(#layout)
}

// -----

#layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  // expected-error @+1 {{result index 99999999999999999999999 in restore_value(...) does not fit in a 64-bit signed integer}}
  hal.executable.autotuning.export @g variants([@a]) restore_value(99999999999999999999999)
  hal.executable.export public @a ordinal(0) layout(#layout)
}

// -----

// The smallest and largest i64 are fine.
#layout = #hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>
hal.executable.source private @ex {
  hal.executable.autotuning.export @g variants([@a]) choices([9223372036854775807, -9223372036854775808] = @a)
  hal.executable.export public @a ordinal(0) layout(#layout) count(%device: !hal.device, %n: index, %m: index) -> (index, index, index) {
    %c1 = arith.constant 1 : index
    hal.return %c1, %c1, %c1 : index, index, index
  }
}
