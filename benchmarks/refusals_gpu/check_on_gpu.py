"""Issue 14 on the GPU: modules the refusal checks let through run correctly (IREE's 2023
custom_dispatch sample, an in-place Triton variant, bool pointers with i8 and i1 tensors, the
RFC example without benchmark entries tuned on live calls). Build the modules here, carry them
and the IREE runtime wheel:

    cd tests/lit/compat/Inputs && autotune-export ../custom_dispatch_2023.mlir --emit vmfb --target sm_90 -o ../../../../.gpu_refusals/custom_dispatch.vmfb
    autotune-export benchmarks/refusals_gpu/gpu_cases.mlir --emit vmfb --target sm_90 -o .gpu_refusals/gpu_cases.vmfb
    autotune-export tests/lit/compat/rfc_dynamic.mlir --emit vmfb --target sm_90 -o .gpu_refusals/rfc_dynamic.vmfb

then on the GPU machine: python3 benchmarks/refusals_gpu/check_on_gpu.py (REFUSALS_VMFB_DIR=.gpu_refusals).
"""
import os, sys, subprocess, glob
import numpy as np
sys.path.insert(0, os.getcwd())
import iree.runtime as rt
from autotune_export.runtime.tuner import AutotunedModule
D = os.environ.get("REFUSALS_VMFB_DIR", ".gpu_refusals")
ok = True
def check(name, cond):
    global ok
    print(("PASS " if cond else "FAIL ") + name, flush=True)
    ok &= bool(cond)

# 1. IREE's 2023 custom_dispatch sample, built for sm_90 (sm_80 PTX JIT, arith.addf for sm_89)
runner = glob.glob(os.path.join(os.path.dirname(rt.__file__), "..", "_runtime_libs", "iree-run-module"))
out = subprocess.run([runner[0], "--device=cuda", f"--module={D}/custom_dispatch.vmfb", "--function=mixed_invocation",
                      "--input=8xf32=2", "--input=8xf32=4"], capture_output=True, text=True)
print(out.stdout.strip(), out.stderr.strip()[-500:])
check("custom_dispatch_2023 mixed_invocation = 96", "8xf32=96 96 96 96 96 96 96 96" in out.stdout)

# 2. in place: x tied to a result, kernel stores 2x into out and zeros into x; every variant
m = AutotunedModule(f"{D}/gpu_cases.vmfb", driver="cuda", cache=None)
x = np.arange(1024, dtype=np.float32)
for k in range(2):
    m.select("g", k)
    xr, o = m("inplace", x.copy())
    check(f"inplace variant {k}: out = 2x", np.array_equal(np.asarray(o), 2 * x))
    check(f"inplace variant {k}: x zeroed", np.array_equal(np.asarray(xr), np.zeros_like(x)))
# 3. *i1 pointer with i8 and i1 tensors: nonzero bytes are true
keep8 = (np.arange(1024) % 3).astype(np.int8)  # 0, 1, 2
r8 = np.asarray(m("mask_i8", x, keep8))
check("bool pointer, i8 tensor", np.array_equal(r8, np.where(keep8 != 0, x, 0)))
keep1 = (np.arange(1024) % 2 == 0)
r1 = np.asarray(m("mask_i1", x, keep1))
check("bool pointer, i1 tensor", np.array_equal(r1, np.where(keep1, x, 0)))
m.autotune()
check("tuning picked variants", all(s in ("tuned",) for s in m.sources.values()))

# 4. the RFC example, dynamic shapes: no benchmark entries; live calls tune (round-robin)
# 4. The RFC example has no benchmark entries (no check possible): round-robin on live calls stays
#    on the default unless the user opts in (issue 21 item 1), then rotates and locks.
a = np.ones((64, 32), np.float32); b = np.ones((32, 128), np.float32)
r = AutotunedModule(f"{D}/rfc_dynamic.vmfb", driver="cuda", cache=None, strategy="round-robin", min_rounds=2, max_rounds=3)
print(r.autotune(), r.notes)
for _ in range(8):
    y = r("matmul", a, b)
check("rfc_dynamic: no unchecked rotation without opt-in", r.sources["executable::matmul"] != "round-robin")
check("rfc_dynamic: result shape", np.asarray(y).shape == (64, 128))
r = AutotunedModule(f"{D}/rfc_dynamic.vmfb", driver="cuda", cache=None, strategy="round-robin", min_rounds=2, max_rounds=3,
                    allow_unchecked=True)
for _ in range(8):
    y = r("matmul", a, b)
check("rfc_dynamic: round-robin locked with allow_unchecked", r.sources["executable::matmul"] == "round-robin")
check("rfc_dynamic: result shape (opted in)", np.asarray(y).shape == (64, 128))
print("ALL PASS" if ok else "SOME FAILED")
