"""The one-array view of pinocchio's frame placements against pinocchio's own placements."""
import numpy as np
import pinocchio as pin

from humanoid_balance.model.kinematics import frame_placement_rows
from support.model_fixtures import talos_urdf


def test_frame_placement_rows_follow_every_frame_of_a_third_party_robot_through_kinematics_passes():
    model = pin.buildModelFromUrdf(str(talos_urdf()), pin.JointModelFreeFlyer())
    data = model.createData()
    rows = frame_placement_rows(data)
    assert rows is not None and rows.shape == (model.nframes, 12)
    for _ in range(3):
        pin.framesForwardKinematics(model, data, pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq)))
        for frame, placement in enumerate(data.oMf):
            np.testing.assert_array_equal(rows[frame, :9].reshape(3, 3), placement.rotation.T)
            np.testing.assert_array_equal(rows[frame, 9:], placement.translation)
    assert not rows.flags.writeable
