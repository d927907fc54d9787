"""The benchmark suite's smoke run: every case of ``benchmarks/suite`` once at its smoke size.

``coopsim bench smoke [REGEX]`` runs this file in a process of its own (``python
benchmarks/smoke.py [REGEX]``, with the clone and ``benchmarks/`` on ``PYTHONPATH``); it may be
run directly the same way. Each case is said as ``ok``, ``skipped: why`` or ``FAILED: error``;
the last line is ``every case ran`` or ``N failed``, and the exit status is 1 if one failed.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import pkgutil
import re
import subprocess
import sys
import time
from pathlib import Path

PREFIXES = ("time_", "track_", "peakmem_", "mem_", "timeraw_")
TOP = Path(__file__).resolve().parents[1]


def suite_cases(package: str = "suite"):
    """Every case of the suite: (module, class or None, method name, callable owner), after
    importing every module of ``benchmarks/<package>``."""
    sys.path.insert(0, str(TOP / "benchmarks"))
    root = importlib.import_module(package)
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{package}.{info.name}")
        for name, obj in sorted(vars(module).items()):
            if inspect.isclass(obj) and obj.__module__ == module.__name__:
                methods = [m for m in dir(obj) if m.startswith(PREFIXES)]
                if methods:
                    yield module, obj, methods
            elif inspect.isfunction(obj) and name.startswith(PREFIXES):
                yield module, None, [name]


def smoke_one(module, cls, methods, say) -> int:
    """Run a class's (or a function's) cases once for each combination of its parameters; say
    each as ``ok``, ``skipped: why`` or ``FAILED: error``. Returns the failures."""
    where = f"{module.__name__.split('.', 1)[1]}.{cls.__name__ if cls else methods[0]}"
    if cls is None:
        return _attempt(where, lambda: getattr(module, methods[0])(), say)
    params = cls.params if hasattr(cls, "params") else ()
    combos = list(itertools.product(*params)) if params and isinstance(params[0], (list, tuple)) \
        else [(p,) for p in params] or [()]
    failed = 0
    for combo in combos:
        obj = cls()
        cache = [cls().setup_cache()] if hasattr(cls, "setup_cache") else []

        def run(obj=obj, combo=combo, cache=cache):
            if hasattr(obj, "setup"):
                obj.setup(*cache, *combo)
            try:
                for name in methods:
                    result = getattr(obj, name)(*cache, *combo)
                    if name.startswith("timeraw_"):  # asv runs the code it returns: so do we
                        _run_code(result)
            finally:
                if hasattr(obj, "teardown"):
                    obj.teardown(*cache, *combo)
        failed += _attempt(f"{where}{combo if combo else ''}", run, say)
    return failed


def _run_code(code: str) -> None:
    """Run ``code`` in a fresh interpreter importing this coopsim, as asv's ``timeraw_``."""
    top = str(TOP)
    path = os.pathsep.join(p for p in (top, os.environ.get("PYTHONPATH")) if p)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=path))


def _attempt(where: str, run, say) -> int:
    """``run()``, said as ok / skipped / FAILED with its time; 1 if it failed."""
    t0 = time.perf_counter()
    try:
        run()
    except NotImplementedError as why:
        say(f"{where}: skipped: {why}")
        return 0
    except Exception as error:  # noqa: BLE001 - a broken case is reported, the rest still run
        say(f"{where}: FAILED: {type(error).__name__}: {error}")
        return 1
    say(f"{where}: ok ({time.perf_counter() - t0:.2f} s)")
    return 0


def smoke(only: str | None = None) -> int:
    """Every case of the suite once at its smoke size; the number of failures."""
    os.environ["COOPSIM_BENCH_SMOKE"] = "1"  # before the suite's modules read it
    failed = 0
    for module, cls, methods in suite_cases():
        name = module.__name__.split(".", 1)[1]
        if only and not re.search(only, name):
            continue
        failed += smoke_one(module, cls, methods, lambda line: print(line, flush=True))
    print(f"{failed} failed" if failed else "every case ran", flush=True)
    return failed


if __name__ == "__main__":
    sys.exit(1 if smoke(sys.argv[1] if len(sys.argv) > 1 else None) else 0)
