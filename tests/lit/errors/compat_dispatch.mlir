// Older IREE syntax at dispatch sites and on modules (frontend/compat.py): a dispatch's
// hal.interface.bindings is dropped when its bindings ascend (IREE 3.x binds the tensors in
// order); any other mapping is refused where it was written, as on exports.
// RUN: autotune-export %s -p '' --split-input-file --verify-diagnostics

func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c4 = arith.constant 4 : index
  %0 = flow.dispatch @ex::@k[%c4](%x, %y) {
    // expected-error @+1 {{hal.interface.bindings maps dispatch tensors to bindings out of order; IREE 3.x binds the tensor operands, then the results, in the layout's order: reorder the operands or the layout instead}}
    hal.interface.bindings = [#hal.interface.binding<0, 1>, #hal.interface.binding<0, 0>, #hal.interface.binding<0, 2>]
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{hal.interface.bindings is not a list of #hal.interface.binding<set, binding>}}
  %0 = flow.dispatch @ex::@k[%c4](%x) {hal.interface.bindings = [#hal.interface.binding<0>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// In order (two sets, ascending): dropped, the other attributes of the dictionary kept
// (tests/unit/test_refusals.py checks the text).
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c4 = arith.constant 4 : index
  %0 = flow.dispatch @ex::@k[%c4](%x) {hal.interface.bindings = [#hal.interface.binding<0, 0>, #hal.interface.binding<1, 0>], keep} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A module's hal.device.targets is dropped (the command line picks the device), its other
// attributes kept.
#t = #hal.executable.target<"cuda", "cuda-nvptx-fb", {target_arch = "sm_52"}>
#d = #hal.device.target<"cuda", {executable_targets = [#t], legacy_sync}>
module @m attributes {hal.device.targets = [#d], keep.me} {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    %c4 = arith.constant 4 : index
    %0 = flow.dispatch @ex::@k[%c4](%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
