"""The Crazyflie's own wire: every simulated Crazyflie answers Bitcraze's CRTP over UDP, so
``cflib`` scripts (``udp://127.0.0.1:19850``) fly coopsim's Crazyflies unchanged
(``coopsim run --crtp``; docs/crazyflie.md). A front end like ``net/`` and ``ros2/``: it reads
the run's snapshots and queues commands into the robots' command slots, never touching the
engine."""
