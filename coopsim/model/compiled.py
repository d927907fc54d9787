"""numba, optional: the one decorator every compiled kernel of coopsim is made with.

numba is a dependency of coopsim, but the kernels' modules must import without it (the swarm
library runs in controllers on machines without numba; the ray casters and the kinematic engine
then serve their numpy paths). So the kernels are decorated with :func:`jit`, which is numba's
``njit`` when numba imports and the identity otherwise, and loop with :data:`prange`, which is
``range`` without numba. Callers test :data:`COMPILED` before calling a kernel that only pays
compiled. The thread policy for the kernels is :mod:`coopsim.model.threads`.

Importing this module imports numba (when installed); nothing in the client does.
"""

from __future__ import annotations

try:
    import numba
    from numba import prange
except ImportError:  # numba missing: the numpy / Python paths serve
    numba = None
    prange = range

#: True when kernels are compiled (numba imported).
COMPILED = numba is not None


def jit(parallel: bool = False, inline: bool = False):
    """numba's ``njit``, cached on disk (``cache=True``: ``__pycache__`` or
    ``NUMBA_CACHE_DIR``), with numpy's division semantics (no Python division checks: the
    kernels check their divisors or know them non-zero); without numba the identity, so that
    the module defining the kernel imports.

    Args:
        parallel: Compile ``prange`` loops to run on numba's threads.
        inline: Inline in numba's IR at every call site. Per-item functions called from a loop
            need it: a call passing arrays increfs and decrefs each (atomic operations,
            contended by the threads, costlier than the work), and LLVM inlines only small
            functions.

    Returns:
        A decorator for the kernel.
    """
    if numba is None:
        return lambda f: f
    return numba.njit(cache=True, parallel=parallel, error_model="numpy",
                      inline="always" if inline else "never")
