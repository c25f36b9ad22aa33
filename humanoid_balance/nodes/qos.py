"""The suite's QoS profiles (docs/conventions.md): what each kind of topic needs, said once."""
from rclpy.qos import QoSProfile, ReliabilityPolicy

__all__ = ["SENSOR_QOS", "LATEST_QOS", "COMPANION_QOS", "CHANGES_QOS", "RELIABLE_QOS"]

SENSOR_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
"""Sensor topics in: best effort (docs/conventions.md), and only the latest sample: a node that falls behind works on
the newest reading instead of a queue of stale ones."""
LATEST_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
"""The control chain's inputs that come every tick (estimates, odom, ZMP, commands): best effort, the latest sample
only. A lost sample is replaced by the next one a tick later, sooner than a resend; a reliable writer (every output
of the suite) serves a best-effort reader without acknowledgements, which spares each delivery over DDS the
writer's and the reader's bookkeeping of them (a fifth of a delivery's CPU time here)."""
COMPANION_QOS = QoSProfile(depth=4, reliability=ReliabilityPolicy.BEST_EFFORT)
"""An input published with another under the same stamp and read with it (odom with estimated_joint_states): as
LATEST_QOS, but the last few, so that the one of the other's stamp is still there when the node reads it
(input_guard.PairedInput)."""
CHANGES_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
"""Inputs published when they change (contact phases): reliable, the latest sample only — a lost change would stand
until the next one."""
RELIABLE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
"""The suite's own outputs, and inputs where every message counts (references, trajectories): reliable."""
