"""Per-process timing for benchmarks/bench_pipeline.py, loaded through PYTHONPATH.

Python imports ``sitecustomize`` at start-up, so with this folder on PYTHONPATH and
DRFIDELITY_BENCH_LOG set, every stage process, its forkserver and every job process forked from
it appends one JSON line to that file when it exits: when it started (from /proc), its CPU seconds spent starting
the interpreter, in imports (top-level ``import`` statements, timed once however deeply they
nest), in numba compiles (numba's "numba:compile" events; loads from numba's disk cache are not
compiles) and in all. CPU seconds, not wall time, because two such processes share the two
cores. DVC's own processes are left alone: the stages' code is what is measured.
"""

import os

LOG = os.environ.get("DRFIDELITY_BENCH_LOG")


def _command() -> list[str]:
    with open("/proc/self/cmdline", "rb") as cmdline:
        return [part.decode(errors="replace") for part in cmdline.read().split(b"\0") if part]


def _started() -> float:
    """The process's start as a Unix time, from its start tick in /proc."""
    import time

    with open("/proc/self/stat") as stat:
        ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as uptime:
        since_boot = float(uptime.read().split()[0])
    return time.time() - since_boot + ticks / os.sysconf("SC_CLK_TCK")


def _install(log: str, command: list[str]) -> None:
    import atexit
    import builtins
    import importlib.abc
    import importlib.util
    import json
    import sys
    import time

    cpu = time.process_time
    spent = {"boot": cpu(), "imports": 0.0, "compile": 0.0, "compile_in_imports": 0.0}
    depth = {"import": 0, "compile": 0, "compile_start": 0.0}
    real_import = builtins.__import__

    def timed_import(*args, **kwargs):
        if depth["import"]:
            return real_import(*args, **kwargs)
        depth["import"] = 1
        start = cpu()
        try:
            return real_import(*args, **kwargs)
        finally:
            spent["imports"] += cpu() - start
            depth["import"] = 0

    def listen(event) -> None:
        class CompileTimer(event.Listener):
            def on_start(self, ev):
                if depth["compile"] == 0:
                    depth["compile_start"] = cpu()
                depth["compile"] += 1

            def on_end(self, ev):
                depth["compile"] -= 1
                if depth["compile"] == 0:
                    seconds = cpu() - depth["compile_start"]
                    spent["compile"] += seconds
                    if depth["import"]:
                        spent["compile_in_imports"] += seconds

        event.register("numba:compile", CompileTimer())

    class NumbaEvents(importlib.abc.MetaPathFinder):
        """Registers the compile timer as soon as numba's event module is loaded."""

        def find_spec(self, name, path=None, target=None):
            if name != "numba.core.event":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            run_module = spec.loader.exec_module

            def exec_module(module):
                run_module(module)
                listen(module)

            spec.loader.exec_module = exec_module
            return spec

    def write() -> None:
        # the program and up to three arguments: "drfidelity stage embed density" names its
        # stage, a job process's long "-c" line is cut short
        record = {"pid": os.getpid(), "ppid": os.getppid(), "command": command[1:5],
                  "start": started, "end": time.time(), "cpu": cpu(), **spent}
        with open(log, "a") as out:
            out.write(json.dumps(record) + "\n")

    def forked() -> None:
        """A job process forked from a stage's forkserver: its own clock and counts (the
        forkserver's imports are the forkserver's record)."""
        nonlocal started
        started = time.time()
        spent.update(boot=0.0, imports=0.0, compile=0.0, compile_in_imports=0.0)

    def exit_writing(code: int) -> None:
        """multiprocessing ends a forked child with ``os._exit``, which skips atexit."""
        write()
        real_exit(code)

    started = _started()
    builtins.__import__ = timed_import
    sys.meta_path.insert(0, NumbaEvents())
    atexit.register(write)
    os.register_at_fork(after_in_child=forked)
    real_exit, os._exit = os._exit, exit_writing


if LOG:
    _args = _command()
    if not any(part.endswith("/dvc") for part in _args[:2]):
        _install(LOG, _args)
