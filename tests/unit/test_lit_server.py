"""tests/lit/cli_server.py, the fork server that runs the fast lit suite's ``autotune-export``
and FileCheck commands: a command run through it sees its own argv, working folder,
environment and standard streams, and its client exits as the command did (status, or the
signal that ended it), so that a lit RUN line means what it means with the installed command."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

SERVER = pathlib.Path(__file__).resolve().parents[1] / "lit" / "cli_server.py"

PROGRAM = '''
import os, signal, sys

PREPARED = []
PREPARED_IN = None

def prepare():
    global PREPARED_IN
    PREPARED.append("once")
    PREPARED_IN = os.getpid()

def main():
    what = sys.argv[1]
    if what == "echo":
        print("argv", sys.argv[0], sys.argv[2:])
        print("path0", sys.path[0])
        print("cwd", os.getcwd())
        print("env", os.environ.get("ATX_SERVER_TEST"), "PARENT_ONLY" in os.environ)
        print("stdin", sys.stdin.read().strip())
        print("to stderr", file=sys.stderr)
        return 3
    if what == "message":
        sys.exit("a message instead of a status")
    if what == "raise":
        raise ValueError("not caught")
    if what == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if what == "prepared":
        print("prepared", PREPARED, os.getpid() != PREPARED_IN)
        return 0
    if what == "atexit":
        import atexit
        atexit.register(lambda: print("at exit"))
        sys.stdout.write("unflushed ")
        return None
'''


@pytest.fixture
def server(tmp_path):
    (tmp_path / "atx_server_prog.py").write_text(PROGRAM)
    sock = tmp_path / "s"
    env = dict(os.environ, PYTHONPATH=str(tmp_path), PARENT_ONLY="1")
    proc = subprocess.Popen([sys.executable, str(SERVER), "serve", str(sock), f"prog=atx_server_prog:main={tmp_path / 'prog'}",
                             "+json", "+atx_server_prog:prepare"],
                            env=env, stdin=subprocess.DEVNULL)
    yield sock
    proc.terminate()
    proc.wait(timeout=60)


def _run(sock, *args, cwd, input="", env=None):
    env = env if env is not None else {"ATX_SERVER_TEST": "yes", "PATH": os.environ.get("PATH", "")}
    return subprocess.run([sys.executable, "-S", "-E", str(SERVER), str(sock), "prog", *args], cwd=cwd, env=env,
                          input=input, capture_output=True, text=True, timeout=300)


def test_a_command_has_its_own_argv_folder_environment_and_streams(server, tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    proc = _run(server, "echo", "a b", "c", cwd=folder, input="from stdin\n")
    assert proc.returncode == 3
    assert proc.stdout.splitlines() == [f"argv {tmp_path / 'prog'} ['a b', 'c']", f"path0 {tmp_path}", f"cwd {folder}", "env yes False",
                                        "stdin from stdin"]
    assert proc.stderr == "to stderr\n"


def test_exit_statuses_are_the_interpreters(server, tmp_path):
    proc = _run(server, "message", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (1, "a message instead of a status\n")
    proc = _run(server, "raise", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.rstrip().endswith("ValueError: not caught") and "Traceback" in proc.stderr
    proc = _run(server, "atexit", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "unflushed at exit\n")


def test_a_signal_ends_the_client_too(server, tmp_path):
    assert _run(server, "kill", cwd=tmp_path).returncode == -signal.SIGKILL


def test_a_preloaded_function_runs_once_in_the_server(server, tmp_path):
    """``+MODULE:FUNCTION`` calls FUNCTION once, in the server, before any command (lit.cfg.py
    has Triton's key of its installation memoized there): every command sees its effect and
    runs in a process of its own."""
    for _ in range(2):
        proc = _run(server, "prepared", cwd=tmp_path)
        assert (proc.returncode, proc.stdout) == (0, "prepared ['once'] True\n"), proc.stderr
