// REQUIRES: integration
// examples/call_sites: kernels of a package written like public libraries (tritonlib), exported
// as they are called. Each builds a .vmfb for sm_90 (layer norm with None weight/bias and a
// dtype constexpr; cross entropy over int64 labels behind the library's launcher; fp8 input);
// the configs the library picks at import time follow the --target (Triton's driver answers
// for it while the file is imported): 6 cross-entropy configs for sm_90, 4 for sm_80, and the
// fp8 kernel's NUM_PROGRAMS is the SM count of the target's representative part.
// RUN: autotune-export %examples/call_sites/layer_norm.mlir --emit vmfb --target sm_90 -o %t.ln.vmfb
// RUN: autotune-export %examples/call_sites/cross_entropy.mlir --emit vmfb --target sm_90 -o %t.ce.vmfb 2>&1 | FileCheck %s --check-prefix=CE90
// RUN: autotune-export %examples/call_sites/cross_entropy.mlir -p materialize-triton-variants --target sm_80 -o %t.ce80.mlir 2>&1 | FileCheck %s --check-prefix=CE80
// RUN: autotune-export %examples/call_sites/fp8.mlir --emit vmfb --target sm_90 -o %t.fp8.vmfb
// RUN: autotune-export %examples/call_sites/fp8.mlir -p materialize-triton-variants --target sm_90 2>/dev/null | FileCheck %s --check-prefix=FP8
// RUN: autotune-export %examples/call_sites/layer_norm.mlir -p materialize-triton-variants --target sm_90 2>/dev/null | FileCheck %s --check-prefix=LN

// CE90: @ce: 6 variants for sm_90
// CE90: @ce_softcap: 6 variants for sm_90
// CE90: autotune-export: wrote
// CE80: @ce: 4 variants for sm_80
// CE80: @ce_softcap: 4 variants for sm_80

// FP8:      hal.executable.autotuning.export @dequant
// FP8-NEXT:   variants([@dequant_0_512x132xbf16_w4_s3, @dequant_1_512x132xbf16_w8_s3, @dequant_2_1024x132xbf16_w4_s3, @dequant_3_1024x132xbf16_w8_s3])

// The layer norm's weight is a binding, its bias (None) is not; the RMS norm has neither.
// LN-DAG: #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// LN-DAG: #hal.pipeline.layout<constants = 3, bindings = [#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>
// LN:      hal.executable.autotuning.export @layer_norm
// LN-NEXT:   variants([@layer_norm_0_1024xfp16_w4_s3, @layer_norm_1_1024xfp16_w8_s3])
// LN:      hal.executable.autotuning.export @rms_norm
// LN-NEXT:   variants([@rms_norm_0_1024xfp32xTrue_w4_s3, @rms_norm_1_1024xfp32xTrue_w2_s3])
