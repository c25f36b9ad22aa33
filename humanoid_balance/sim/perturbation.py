"""A plant that differs from the controller's model and sensors on purpose, seeded (robustness, issue 35).

- model: every body's mass (and rotational inertia with it) scaled by 1 ± ``mass_error`` and its centre of mass moved
  by ± ``com_error`` along each of its axes, each sign drawn per body;
- encoders: white noise of std ``position_noise`` on each joint position and ``velocity_noise`` on each velocity, and
  a constant offset of ± ``position_bias`` per joint;
- IMU: mounted ``imu_tilt`` off its frame (about a horizontal axis drawn once): its orientation, gyro and
  accelerometer come in the tilted frame; white noise (``gyro_noise``, ``accelerometer_noise``) and a constant bias of
  ± ``gyro_bias`` / ± ``accelerometer_bias`` per axis;
- efforts: white noise and a constant offset per actuator, as fractions of its effort limit (``effort_noise``,
  ``effort_offset``);
- commands applied ``command_delay`` control ticks late;
- the floor inclined: turned by ``floor_roll`` about the world's x axis, then ``floor_pitch`` about its y axis [rad] (a
  positive roll raises the floor's +y side, a positive pitch lowers its +x side). The plant's world frame stays the
  floor's and gravity turns instead, the same mechanics; the IMU reports its attitude against gravity, as an attitude
  filter does, so the robot finds the slope under its feet; and MuJoCo's no-slip pass holds the soles where its soft
  contacts would let them creep downhill (≈ 5 mm/s at 3°, which a rubber sole does not do).

The draws come from one generator seeded with ``perturbation_seed``: the same perturbation gives the same plant.
Units: SI (rad, m, s, fractions).
"""
from typing import NamedTuple

__all__ = ["PlantPerturbation", "NOMINAL", "signs"]


class PlantPerturbation(NamedTuple):
    mass_error: float = 0.0           # fraction of each body's mass, ±
    com_error: float = 0.0            # [m] per axis of each body's CoM, ±
    position_noise: float = 0.0       # [rad or m] std
    position_bias: float = 0.0        # [rad or m] ±, per joint
    velocity_noise: float = 0.0       # [rad/s or m/s] std
    gyro_noise: float = 0.0           # [rad/s] std
    gyro_bias: float = 0.0            # [rad/s] ±, per axis
    accelerometer_noise: float = 0.0  # [m/s²] std
    accelerometer_bias: float = 0.0   # [m/s²] ±, per axis
    imu_tilt: float = 0.0             # [rad] of the IMU's mounting
    effort_noise: float = 0.0         # fraction of each actuator's effort limit, std
    effort_offset: float = 0.0        # fraction of each actuator's effort limit, ±
    command_delay: int = 0            # [control ticks]
    floor_roll: float = 0.0           # [rad] the floor's slope about x
    floor_pitch: float = 0.0          # [rad] ... then about y
    perturbation_seed: int = 0


NOMINAL = PlantPerturbation()


def signs(rng, shape):
    """±1 drawn uniformly."""
    return rng.choice((-1.0, 1.0), size=shape)
