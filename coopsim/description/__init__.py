"""The robot-description layer: robots from description files (URDF, MJCF, xacro-expanded URDF)
and their meshes, as frozen data (imports only :mod:`coopsim.model`).

In memory: ``robot.py`` holds the description (links, joints, sites, meshes) and the robot type
made from it; ``arm.py`` the arm a serial chain makes, ``mobile.py`` a wheeled or flying base,
``rotors.py`` a multirotor's mixer, ``servos.py`` held joints, ``frames.py`` the links' frames.
Reading (untrusted XML through defusedxml, within size limits): ``robotxml.py`` URDF and MJCF,
``mjcf.py`` MJCF's frames, defaults and actuators, ``inertia.py`` repairs non-physical
inertias with a warning; meshes: ``meshes.py`` (STL, OBJ), ``collada.py`` and ``daereader.py``
(COLLADA, with ``numbertext.py``'s number lists), bounded and cached by content
(``meshcache.py``). A scenario's robot section names the file (coopsim.formats.description).
"""
