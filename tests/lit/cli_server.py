"""A fork server for the lit suites' ``autotune-export`` and ``FileCheck`` commands
(lit.cfg.py).

Starting the commands costs most of a fast test's time: Python, the MLIR bindings, Triton and
the package take about 0.6 CPU-seconds to import (FileCheck, the ``filecheck`` package, 0.1),
and the fast suite runs each about 130 times. This server imports them once; each command is a
child forked from it that then runs what the installed console script runs
(``sys.exit(main())``) in the command's working folder, with the command's environment, argv
and standard streams (their file descriptors are passed over the socket, so pipes and
redirections are the command's own). The exit status, or the signal that ended the child, is
the client's. The child ends as the interpreter does (non-daemon threads joined, atexit
functions, streams flushed: a failed flush of stdout is status 120) but without freeing the
imported modules, which would write to (and so copy) every page it shares with the server.

    python cli_server.py serve SOCKET NAME=MODULE:FUNCTION=SCRIPT... [+MODULE[:FUNCTION]...]
                                      the server: ends when its parent (lit) ends
    python -S -E cli_server.py SOCKET NAME ARGS...
                                      one command (the body of the shim named NAME)

The integration suite's server also has Triton imported and its key of its installation
computed (``+autotune_export.cuda.workers:warm_up``), which every command that compiles
needs first. ``lit --param cli=installed`` runs the installed console scripts instead."""

import sys
import time

#: How long a client waits for the server to listen (its start imports nothing first, but the
#: machine may be loaded) before it gives up with an error.
CONNECT_TIMEOUT_S = 300.0
#: Bytes of a C ``int`` (a file descriptor in SCM_RIGHTS data) on the platforms this runs on.
_FD_SIZE = 4


def client(path: str, name: str, argv: list[str]) -> None:
    """Run ``NAME ARGV`` through the server at ``path``; exits as the command did. It imports
    only modules built into the interpreter (``posix``, ``_socket``, ``_signal``, ``marshal``):
    a client is started for every command, and ``socket``, ``json`` or ``os`` would double its
    cost."""
    import _signal
    import _socket
    import marshal
    import posix

    deadline = time.monotonic() + CONNECT_TIMEOUT_S
    while True:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            conn.connect(path)
            break
        except (FileNotFoundError, ConnectionRefusedError):
            conn.close()
            if time.monotonic() > deadline:
                sys.stderr.write(f"cli_server: no server at {path} after {CONNECT_TIMEOUT_S:.0f} s\n")
                posix._exit(3)
            time.sleep(0.02)
    payload = marshal.dumps({"name": name, "argv": argv, "cwd": posix.getcwd(), "env": dict(posix.environ)})
    fds = b"".join(fd.to_bytes(_FD_SIZE, sys.byteorder) for fd in (0, 1, 2))
    conn.sendmsg([len(payload).to_bytes(8, "big")], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
    conn.sendall(payload)
    reply = b""
    while chunk := conn.recv(64):
        reply += chunk
    kind, _, value = reply.decode().partition(" ")
    if kind == "exit":
        posix._exit(int(value))
    if kind == "signal":
        sig = int(value)
        if sig not in (_signal.SIGKILL, _signal.SIGSTOP):  # these two have no handler to reset
            _signal.signal(sig, _signal.SIG_DFL)
        posix.kill(posix.getpid(), sig)
    sys.stderr.write(f"cli_server: the server answered {reply!r}\n")
    posix._exit(3)


def _receive_request(conn) -> dict:
    """The request a client sent on ``conn`` (marshal: the client imports no json): name,
    argv, cwd, env (bytes, as ``os.environb``) and the file descriptors it passed."""
    import marshal
    import socket

    msg, ancdata, _, _ = conn.recvmsg(8, socket.CMSG_SPACE(3 * _FD_SIZE))
    fds = []
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += [int.from_bytes(data[i : i + _FD_SIZE], sys.byteorder) for i in range(0, len(data) - _FD_SIZE + 1, _FD_SIZE)]
    size = int.from_bytes(msg, "big")
    payload = b""
    while len(payload) < size:
        chunk = conn.recv(size - len(payload))
        if not chunk:
            raise ConnectionError("the client left before its request was read")
        payload += chunk
    request = marshal.loads(payload)
    request["fds"] = fds
    return request


def _become_command(request: dict, prog: str) -> None:
    """In the forked child: take the command's streams, folder, environment and argv."""
    import io
    import os
    import signal

    for target, fd in enumerate(request["fds"]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environb.update(request["env"])
    sys.argv = [prog, *request["argv"]]
    sys.path[0] = os.path.dirname(prog)  # as for the console script: its folder, not this one's
    # Streams as a fresh interpreter makes them (encoding and errors are the server's, which
    # started with the suite's environment; PYTHONUNBUFFERED is set there).
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, mode, closefd=False)
        tty = raw.isatty()
        buffered = io.BufferedReader(raw) if mode == "r" else io.BufferedWriter(raw)
        stream = io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                                  line_buffering=tty or name == "stderr",
                                  write_through=mode == "w" and (unbuffered or name == "stderr"))
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def serve(path: str, programs: dict[str, tuple[str, str]], preload: list[str] = ()) -> dict:
    """Listen at ``path``; in a forked child return that command's request, never in the
    server (which exits when its parent, lit, is gone). The programs' modules are imported
    first, then the modules ``preload`` names (what most commands import on their way: each
    child would import them again); an entry ``MODULE:FUNCTION`` also calls that function once
    here (work that each child would otherwise do again and whose result the module memoizes,
    as ``autotune_export.cuda.workers.warm_up`` does Triton's key of its installation)."""
    import os
    import select
    import signal
    import socket

    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(128)
    # Import before the socket is at its name: clients wait for it, and every child then starts
    # with the package imported.
    import importlib

    import gc

    for module in [module for module, _ in programs.values()]:
        importlib.import_module(module)
    for entry in preload:  # MODULE, or MODULE:FUNCTION (called once, here, with no argument)
        module, _, function = entry.partition(":")
        imported = importlib.import_module(module)
        if function:
            getattr(imported, function)()
    gc.freeze()  # a child's garbage collections leave the server's objects (and their pages) alone

    os.rename(path + ".new", path)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select through the pipe
    waiting: dict[int, socket.socket] = {}
    while os.getppid() == parent:
        ready, _, _ = select.select([listener, wake_r], [], [], 1.0)
        if wake_r in ready:
            os.read(wake_r, 4096)
        if listener in ready:
            conn, _ = listener.accept()
            try:
                request = _receive_request(conn)
            except (OSError, ValueError) as err:
                sys.stderr.write(f"cli_server: a bad request: {err}\n")
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                for fd in (wake_r, wake_w):
                    os.close(fd)
                for sock in (listener, conn, *waiting.values()):
                    sock.close()
                _become_command(request, programs[request["name"]][1])
                return request
            for fd in request["fds"]:
                os.close(fd)
            waiting[pid] = conn
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid)
            if os.WIFSIGNALED(status):
                answer = f"signal {os.WTERMSIG(status)}"
            else:
                answer = f"exit {os.waitstatus_to_exitcode(status)}"
            try:
                conn.sendall(answer.encode())
            except OSError:
                pass  # the client is gone (lit's timeout)
            conn.close()
    with_children = list(waiting)
    os.unlink(path)
    sys.exit(f"cli_server: lit ended with {len(with_children)} commands running" if with_children else 0)


def run_script() -> None:
    """The program ``python SCRIPT ARGS...`` (lit.cfg.py's ``%atx-python``): SCRIPT runs as
    ``__main__`` with ``sys.argv`` ``[SCRIPT, *ARGS]`` and its folder first on ``sys.path``, as
    the interpreter runs it, in a child that has the package imported already."""
    import os
    import runpy

    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
    runpy.run_path(sys.argv[0], run_name="__main__")


def _run_and_exit(main) -> None:
    """``sys.exit(main())`` and the interpreter's exit, except for freeing the modules."""
    import atexit
    import os
    import threading

    try:
        try:
            sys.exit(main())
        except SystemExit as exit:
            code = exit.code
            if code is None:
                status = 0
            elif isinstance(code, int):
                status = code & 0xFF
            else:
                sys.stderr.write(f"{code}\n")
                status = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for name in ("stdout", "stderr"):
        try:
            getattr(sys, name).flush()
        except Exception:
            if name == "stdout" and status == 0:
                status = 120
    os._exit(status)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        specs = dict(arg.split("=", 1) for arg in sys.argv[3:] if not arg.startswith("+"))
        programs = {name: (spec.split("=", 1)[0].split(":")[0], spec.split("=", 1)[1]) for name, spec in specs.items()}
        request = serve(sys.argv[2], programs, [arg[1:] for arg in sys.argv[3:] if arg.startswith("+")])
        # Here only in a forked child: run the command as its console script does.
        import importlib

        module, function = specs[request["name"]].split("=", 1)[0].split(":")
        _run_and_exit(getattr(importlib.import_module(module), function))
    client(sys.argv[1], sys.argv[2], sys.argv[3:])
