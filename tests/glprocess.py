"""Test files that render camera images (``camera3d``: MuJoCo's EGL context) run in a process
of their own: PyOpenGL takes one OpenGL platform a process, and a suite worker may have drawn a
viewer window (pyglet's GLX context, the widget layer's PyOpenGL) before, which makes EGL fail;
a camera first makes the viewer fail the other way. In the suite's workers those files are
skipped; tests/physics/test_camera3d_process.py runs them in a child process and fails with
their output when one of them fails. A simulation and its viewer are separate processes in
every real use (docs/gui.md), so this is the tests' concern alone."""

from __future__ import annotations

import os

import pytest

#: Set in the child process that runs the files below.
OWN = "COOPSIM_OWN_GL_PROCESS"
#: The test files that render with MuJoCo's EGL renderer in the test's own process.
FILES = ("tests/physics/test_camera3d.py", "tests/recording/test_camera3d_recorded.py")


def own_gl_process():
    """The mark of a test file that must render in a process of its own (see above)."""
    return pytest.mark.skipif(not os.environ.get(OWN),
                              reason="renders with EGL in a process of its own: "
                                     "tests/physics/test_camera3d_process.py runs it")
