"""The model layer: the data and contracts every other layer shares; imports nothing of coopsim
and no pymunk, zmq or window library.

* **Specs and values**: frozen specs of worlds, scenarios and robots (``specs.py``), typed
  parameters (``params.py``), command declarations and the protocol's error codes
  (``commands.py``), one table of names and numeric limits for files, ``/sim`` and the viewer
  (``limits.py``, ``validate.py``), snapshots (``snapshot.py``), one root error class
  (``errors.py``).
* **Plugin contracts and registries**: hardware modules and the ``Frame`` they sense from
  (``module.py``), a kind's per-robot state and its share of the step's one noise draw
  (``kernel.py``, ``noise_kernels.py``), optional capabilities per front end
  (``capabilities.py``, ``capability_kinds.py``), robot types and engine-neutral assemblies
  (``robot_type.py``), drivers and rules (``driver.py``), metric kinds (``metric_kind.py``),
  the entry-point registries and the look-ups by declaration (``registry.py``, ``plugins.py``).
* **Links' poses**: ``linkposes.py`` (every link's world pose, numpy only; the robots from
  description files themselves are :mod:`coopsim.description`'s).
* **Arms**: specs and kinematics (``arm.py``), compiled forward and inverse kinematics
  (``armkernel.py``, ``ikkernel.py``), an arm as the state document shows it (``armstate.py``).
* **Wire data shared by servers and clients**: squad orders (``orders.py``), shared control
  (``steering.py``), teleoperation (``teleop.py``), radio payloads (``radio.py``), camera images
  (``images.py``), meshes (``meshwire.py``, ``scenery.py``, ``scenerydoc.py``), external robots'
  held poses (``held.py``).
* **Untrusted files**: a regular file only, read within a bound (``files.py``).
* **Compiled code**: ``compiled.py`` (``jit``, the one optional-numba decorator every kernel is
  made with), ``threads.py`` (the kernels' thread policy), ``quaternion_kernels.py``.
* Also: where bodies may start (``placement.py``), a body's sane state (``health.py``), the
  bundled files (``bundled.py``), learning tasks (``task.py``), monitor summaries
  (``metrics.py``), zone triangulation (``polygons.py``).
"""
