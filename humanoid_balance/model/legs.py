"""Which of a robot's joints make up a leg: the serial-equivalent output joints from the root to a sole, and those of
them that turn about the world y axis (hip pitch, knee, ankle pitch). No ROS."""
import numpy as np
import pinocchio as pin

__all__ = ["leg_joints", "pitch_joints"]


def leg_joints(robot, sole_frame):
    """The serial-equivalent output joints from the root to ``sole_frame``, hip to ankle."""
    model = robot.model
    outputs = set(robot.output_names)
    supports = model.supports[model.frames[model.getFrameId(sole_frame)].parentJoint]
    return tuple(model.names[j] for j in supports if j > 0 and model.names[j] in outputs)


def pitch_joints(robot, q, joints):
    """Those of ``joints`` that turn about the world y axis at configuration q, in the order given: for a leg from
    hip to ankle, its hip pitch, knee and ankle pitch (REP-103: x forward, y left)."""
    model, data = robot.model, robot.model.createData()
    pin.computeJointJacobians(model, data, q)
    pitching = []
    for name in joints:
        joint = model.getJointId(name)
        axis = pin.getJointJacobian(model, data, joint, pin.LOCAL_WORLD_ALIGNED)[3:, model.joints[joint].idx_v]
        if abs(axis[1]) > 0.9 * np.linalg.norm(axis) > 0.0:
            pitching.append(name)
    return tuple(pitching)
