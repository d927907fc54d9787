"""coopsim-arm: CoopDynSim's robotic arm as a coopsim plugin package.

It adds, through entry points only (see ``pyproject.toml``):

* the robot type ``arm`` (:mod:`coopsim_arm.robot`): a fixed base and three motor-driven links;
* the modules ``arm_joints`` and ``effector`` (:mod:`coopsim_arm.modules`);
* the driver ``reach`` (:mod:`coopsim_arm.reach`): inverse kinematics to a point or a target.

:mod:`coopsim_arm.kinematics` holds the dimensions and the planar kinematics all three share.
Importing this package imports none of them (coopsim loads each through its entry point), so a
network controller importing only the driver needs no numpy.
"""

__version__ = "0.1.0"
