"""Libraries that probe the machine at import (or call) time by other means than torch and
Triton's driver (issue 23 item 4): ``nvidia-smi`` run through :mod:`subprocess` answers for
the export's target while a kernel file is imported and inside ``answering_for_target``, or is
refused naming the tool and the file:line that ran it; a failed import names the last
GPU-related environment variable the library read. Nothing here compiles (fast suite)."""

from __future__ import annotations

import os
import pathlib
import subprocess
import textwrap

import numpy as np
import pytest

from autotune_export.cuda import stub_driver
from autotune_export.cuda import triton_compile as tc
from autotune_export.interop.launch import answering_for_target, launch_to_mlir


def _write(path: pathlib.Path, text: str) -> pathlib.Path:
    path.write_text(textwrap.dedent(text))
    return path


def _machine_state():
    return subprocess.Popen, type(os.environ), os.environ


SMI_AT_IMPORT = '''
import subprocess

import triton
import triton.language as tl

CC = subprocess.check_output(["nvidia-smi", "--query-gpu=compute_cap,name", "--format=csv,noheader"], text=True)
MAJOR = int(CC.split(",")[0].split(".")[0])
MEM = subprocess.run("/usr/bin/nvidia-smi --query-gpu=memory.total --format=csv,nounits -i 0", shell=True,
                     capture_output=True, text=True)
BLOCK = 256 if MAJOR >= 9 else 128


@triton.jit
def k(x_ptr, n, BLOCK: tl.constexpr = BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)
'''


def test_nvidia_smi_at_import_answers_for_the_target(tmp_path):
    before = _machine_state()
    path = _write(tmp_path / "smi_lib.py", SMI_AT_IMPORT)
    for arch, cc, name, mib, block in ((90, "9.0", "NVIDIA H100 80GB HBM3", 81559, 256),
                                       (80, "8.0", "NVIDIA A100-SXM4-80GB", 81920, 128)):
        module = tc.import_kernel_file(path, arch)
        assert module.CC == f"{cc}, {name}\n"
        assert (module.MEM.returncode, module.MEM.stdout) == (0, f"memory.total [MiB]\n{mib}\n")
        assert tc.load_kernel(tc.KernelSource(str(path), "k", import_arch=arch)).constexpr_defaults == {"BLOCK": block}
    assert _machine_state() == before  # restored: no Popen or os.environ class left behind
    # Planned for sm_90 with the value the library derived from nvidia-smi.
    module = tc.import_kernel_file(path, 90)
    with answering_for_target("sm_90"):
        text = launch_to_mlir(module.k, (4,), np.zeros(1024, np.float32), 1024, outputs=["x_ptr"], target="sm_90")
    assert "BLOCK = 256" in text and "grid(4)" in text and "tensor<1024xf32>" in text


def test_nvidia_smi_output_matches_the_tool_layout():
    out = stub_driver.nvidia_smi_output
    assert out(90, ["--query-gpu=compute_cap", "--format=csv"]) == "compute_cap\n9.0\n"
    assert out(100, ["--query-gpu=name,compute_cap,memory.total", "--format=csv,noheader"]) == \
        "NVIDIA B200, 10.0, 183359 MiB\n"
    assert out(89, ["--id=0", "--query-gpu=count,index", "--format=csv,noheader,nounits"]) == "1, 0\n"
    with pytest.raises(stub_driver.StubDriverError, match=r"lib.py:3 ran nvidia-smi -i 1 .*: device '1' is not answered"):
        out(90, ["-i", "1", "--query-gpu=name", "--format=csv"], "lib.py:3")
    with pytest.raises(stub_driver.StubDriverError, match=r"field 'uuid' is not answered.* for sm_90"):
        out(90, ["--query-gpu=name,uuid", "--format=csv"])
    with pytest.raises(stub_driver.StubDriverError, match="only --query-gpu with --format=csv is answered"):
        out(90, [])


def test_nvidia_smi_that_is_not_answered_names_the_tool_and_the_line(tmp_path):
    before = _machine_state()
    path = _write(tmp_path / "smi_list.py", '''
        import subprocess
        GPUS = subprocess.check_output(["nvidia-smi", "-L"])
    ''')
    with pytest.raises(tc.KernelLoadError, match=r"StubDriverError: .*smi_list\.py:3 ran nvidia-smi -L: '-L' is not "
                                                 r"answered; .* for sm_90 \(the export's --target\)"):
        tc.load_kernel(tc.KernelSource(str(path), "x", import_arch=90))
    assert _machine_state() == before


def test_other_programs_run_as_they_are():
    with stub_driver.answering_for(90):
        assert subprocess.check_output(["echo", "nvidia-smi"], text=True) == "nvidia-smi\n"
        with subprocess.Popen(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              stdout=subprocess.PIPE) as p:
            assert p.communicate()[0] == b"9.0\n" and p.returncode == 0
        assert os.popen("nvidia-smi --query-gpu=compute_cap --format=csv,noheader").read() == "9.0\n"
    with pytest.raises(FileNotFoundError):  # after the block: the real (absent) tool again
        subprocess.run(["nvidia-smi-absent-here"], check=False)


ENV_AT_IMPORT = '''
import os

VISIBLE = os.environ.get("CUDA_VISIBLE_DEVICES")
ARCH = os.getenv("MYLIB_GPU_ARCH")
if ARCH is None:
    raise RuntimeError("cannot tell the GPU architecture")
'''


def test_import_that_fails_names_the_gpu_variable_it_read(tmp_path, monkeypatch):
    monkeypatch.delenv("MYLIB_GPU_ARCH", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    before = _machine_state()
    path = _write(tmp_path / "env_lib.py", ENV_AT_IMPORT)
    with pytest.raises(tc.KernelLoadError, match=r"RuntimeError: cannot tell the GPU architecture; the last GPU-related "
                                                 r"environment variable it read was MYLIB_GPU_ARCH \(unset, at "
                                                 r".*env_lib\.py:5\): set it as on the target's GPU machine"):
        tc.load_kernel(tc.KernelSource(str(path), "x", import_arch=90))
    assert _machine_state() == before
    monkeypatch.setenv("MYLIB_GPU_ARCH", "sm_90")
    module = tc.import_kernel_file(path, 90)
    assert (module.VISIBLE, module.ARCH) == ("0", "sm_90")


def test_answering_for_target_notes_the_variable_and_restores(monkeypatch):
    monkeypatch.delenv("MYLIB_CUDA_HOME", raising=False)
    before = _machine_state()
    with pytest.raises(KeyError) as info:
        with answering_for_target("sm_90") as reads:
            os.environ["MYLIB_CUDA_HOME"]
    assert reads.reads[-1][:2] == ("MYLIB_CUDA_HOME", None)
    assert any("inside answering_for_target, the last GPU-related environment variable it read was MYLIB_CUDA_HOME "
               "(unset" in note for note in info.value.__notes__)
    assert _machine_state() == before
    assert type(os.environ).__getitem__ is os._Environ.__getitem__
    os.environ.get("MYLIB_CUDA_HOME")  # outside every block: not recorded
    assert reads.reads[-1][0] == "MYLIB_CUDA_HOME" and len(reads.reads) == 1
