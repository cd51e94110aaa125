"""No wait without a limit on a lock, and a bad ``tune --report`` folder refused before tuning
(tester findings 2 and 3 of Dec 2's third trial)."""

from __future__ import annotations

import fcntl
import os
import pathlib

import pytest

from autotune_export.support import files
from autotune_export.tools import tune


def test_a_lock_file_that_cannot_be_created_is_an_error_at_once():
    """A folder that takes no new files (/proc: open(O_CREAT) fails with ENOENT, even for root;
    nothing is created there): an OSError at once, not the wait's TimeoutError. filelock alone
    polled for such a lock file forever, so with the limit of an hour a regression hangs the
    suite instead of passing; no clock decides here."""
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    with pytest.raises(OSError) as err:
        with files.locked("/proc/autotune-export-no-such.json", timeout_s=3600):
            pass
    assert not isinstance(err.value, TimeoutError)


def test_a_held_lock_is_waited_on_for_at_most_the_limit(tmp_path):
    target = tmp_path / "results.json"
    fd = os.open(f"{target}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another holder (filelock uses flock on Unix)
        with pytest.raises(TimeoutError, match="another process holds it"):
            with files.locked(target, timeout_s=0.2):
                pass
    finally:
        os.close(fd)
    with files.locked(target, timeout_s=0.2):  # released: taken at once
        (tmp_path / "inside").write_text("x")
    assert (tmp_path / "inside").read_text() == "x"


@pytest.mark.parametrize("kind", ["file", "unwritable-parent"])
def test_tune_refuses_a_report_path_it_cannot_write_before_loading(tmp_path, capsys, kind):
    module = tmp_path / "m.vmfb"
    module.write_bytes(b"PK\x03\x04not really a module")  # never loaded: the check comes first
    if kind == "file":
        report = tmp_path / "afile"
        report.write_text("x")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes anywhere")
        locked_dir = tmp_path / "ro"
        locked_dir.mkdir(mode=0o500)
        report = locked_dir / "new" / "report"
    assert tune.main([str(module), "--device", "local-sync", "--report", str(report)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"{report}: error: --report "), err
    assert not (pathlib.Path(report).is_dir())
