// REQUIRES: integration
// A kernel taking a spin lock in an integer tensor passed in place (issue 21, item 10): its
// TTIR updates lock_ptr atomically (tt.atomic_cas to take it, tt.atomic_rmw exch to release
// it), so materialize-triton-variants lists the lock's operand in autotune.fake_zeros (with a
// remark) and the benchmark and check entries give it zeros before every run: seeded fake data
// would put ones into the lock, which nothing ever releases (the tuning process would spin
// forever). out_ptr, written by a plain store, keeps its seeded fake data.
// RUN: autotune-export %s -p materialize-triton-variants,verify-autotuning-groups,emit-autotune-initializer --target sm_80 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err

// REMARK: remark: @g: kernel 'locked_sum' updates 'lock_ptr' atomically (tt.atomic_rmw / tt.atomic_cas in its TTIR): the benchmark and check entries give it zeros, not seeded fake data (a lock or counter holding other values may never be released)

// CHECK-LABEL: util.func public @host(
// CHECK:         flow.dispatch @e::@g[%{{.+}}](%arg0, %arg1, %arg2, %{{.+}}) {autotune.fake_zeros = array<i64: 2>}
// CHECK-LABEL: util.func public @__autotune.e.g.bench.0(
// CHECK:         scf.for %[[I:.+]] = {{.+}} iter_args(
// CHECK:           %[[ZC:.+]] = arith.constant 0 : i32
// CHECK-NEXT:      %[[F:.+]]:33 = util.optimization_barrier %{{.+}}, %{{.+}}, %{{.+}}, %[[ZC]], {{.+}}, %[[I]] :
// CHECK:           %[[OUT:.+]] = flow.tensor.bitcast %{{.+}} : tensor<1xi32> -> tensor<1xf32>
// CHECK-NEXT:      %[[LOCK:.+]] = flow.tensor.splat %[[F]]#3 : tensor<1xi32>
// CHECK-NEXT:      flow.dispatch @e::@g[%{{.+}}](%{{.+}}, %[[OUT]], %[[LOCK]], %{{.+}})
// CHECK-LABEL: util.func public @__autotune.e.g.check.0(
// CHECK:         %[[Z:.+]] = flow.tensor.splat %{{.+}} : tensor<1xi32>
// CHECK-NEXT:    flow.dispatch @e::@g[%{{.+}}](%{{.+}}, %{{.+}}, %[[Z]], %{{.+}})

hal.executable.source private @e {
  hal.executable.autotuning.export @g
      triton("../Inputs/lock_kernels.py", "locked_sum")
      signature(x_ptr: *fp32, out_ptr: *fp32 {output}, lock_ptr: *i32 {output}, n: i32)
      configs([{BLOCK = 128}, {BLOCK = 256}])
      workload(n)
      grid(cdiv(n, BLOCK))
}
util.func public @host(%x: tensor<1024xf32>, %out: tensor<1xf32>, %lock: tensor<1xi32>) -> (tensor<1xf32>, tensor<1xi32>) {
  %n = arith.constant 1024 : index
  %n32 = arith.constant 1024 : i32
  %r:2 = flow.dispatch @e::@g[%n](%x, %out, %lock, %n32) : (tensor<1024xf32>, tensor<1xf32>, tensor<1xi32>, i32) -> (%out, %lock)
  util.return %r#0, %r#1 : tensor<1xf32>, tensor<1xi32>
}
