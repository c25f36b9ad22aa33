"""How much of its weight a robot rests on its supports, from its base accelerometer and its joint kinematics.

Newton's law for the centre of mass, m (c̈ − g) = Σ f_contact, says what the supports carry: the CoM's specific
force f_c = c̈ − g, m g upwards standing still, zero in the air. The accelerometer on the base reads the base's
specific force f_b = Rᵀ(p̈_b − g), and the CoM moves about the base as s = c − p_b = R r_c(θ) from the joint
kinematics, so

    f_c = R f_b + s̈                                     (world frame, m/s²)

with s̈ from s at successive samples. Summing the two cancels what limbs do to the base (a stiff leg drive makes the
pelvis shake at ±2 g while the CoM stays put): only the motion of the whole robot is left. The load factor is
n = f_c,z / |g|: 1 standing, 0 in free fall. Units: SI.
"""
import pinocchio as pin

from humanoid_balance.estimation.butterworth import ButterworthLowPass

__all__ = ["SupportLoad", "AIRBORNE_LOAD", "SUPPORTED_LOAD"]

AIRBORNE_LOAD, SUPPORTED_LOAD = 0.2, 0.6
"""Load factors at and below which the supports carry none of the weight, and at and above which they carry all of
it (:meth:`SupportLoad.fraction`)."""


class SupportLoad:
    """The share of its weight a floating-base :class:`RobotModel` rests on its supports, sample by sample.

    Args:
        robot: the floating-base model.
        imu_frame: frame of the accelerometer (default: the root link), mounted rigidly on the base at its origin.
        cutoff, sample_rate: low-pass of f_c [Hz] and the rate it is designed for, following the rate the samples'
            times show.
    """

    def __init__(self, robot, imu_frame, cutoff, sample_rate):
        self.model = robot.model
        self.base_R_imu = robot.mounting_rotation(imu_frame or robot.root_link)
        gravity = self.model.gravity.linear
        self.up = -gravity / (gravity @ gravity)  # f_c · up is the load factor n
        self.lowpass = ButterworthLowPass(cutoff, sample_rate, 3)
        self.samples = []           # (time [s], s = c − p_b [m]) of the last two samples
        self.specific_force = None  # the last low-passed f_c, world frame [m/s²]

    def update(self, data, specific_force, time):
        """f_c from the accelerometer's reading (its own frame [m/s²]) at ``time`` [s], ``data`` holding the
        model's forward kinematics at that sample's configuration; None until three samples give s̈."""
        samples = self.samples
        if samples and not time > samples[-1][0]:  # a repeated or older sample: no new curvature to read
            return self.specific_force
        base = data.oMi[1]
        s = pin.centerOfMass(self.model, data, pin.KinematicLevel.POSITION, False) - base.translation
        samples.append((time, s))
        if len(samples) < 3:
            return None
        (t0, s0), (t1, s1), (t2, s2) = samples
        del samples[0]
        s_ddot = ((s2 - s1) / (t2 - t1) - (s1 - s0) / (t1 - t0)) * (2.0 / (t2 - t0))
        force = base.rotation @ (self.base_R_imu @ specific_force) + s_ddot
        self.specific_force = self.lowpass.update(force, time=time)
        return self.specific_force

    def fraction(self):
        """The share of the weight on the supports: the low-passed load factor mapped to 1 from 0.6 up and to 0
        from 0.2 down, linearly between (1 before any estimate). The quasi-static contact estimate is kept whole
        while the robot stands, sways or dances, and a robot in the air has no weight to put on a contact."""
        if self.specific_force is None:
            return 1.0
        load = float(self.specific_force @ self.up)
        return min(1.0, max(0.0, (load - AIRBORNE_LOAD) / (SUPPORTED_LOAD - AIRBORNE_LOAD)))
