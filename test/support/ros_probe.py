"""An rclpy node living in the test process, used to talk to a node under test in another process."""
import time

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from lifecycle_msgs.msg import State, Transition
from lifecycle_msgs.srv import ChangeState, GetState
from rcl_interfaces.srv import GetParameters
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

RELIABLE = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)

# The primary state each lifecycle transition ends in when it succeeds (design.ros2.org/articles/node_lifecycle.html).
LIFECYCLE_GOAL_STATES = {Transition.TRANSITION_CONFIGURE: State.PRIMARY_STATE_INACTIVE,
                         Transition.TRANSITION_ACTIVATE: State.PRIMARY_STATE_ACTIVE,
                         Transition.TRANSITION_DEACTIVATE: State.PRIMARY_STATE_INACTIVE,
                         Transition.TRANSITION_CLEANUP: State.PRIMARY_STATE_UNCONFIGURED}
LIFECYCLE_START_STATES = {Transition.TRANSITION_CONFIGURE: State.PRIMARY_STATE_UNCONFIGURED,
                          Transition.TRANSITION_ACTIVATE: State.PRIMARY_STATE_INACTIVE,
                          Transition.TRANSITION_DEACTIVATE: State.PRIMARY_STATE_ACTIVE,
                          Transition.TRANSITION_CLEANUP: State.PRIMARY_STATE_INACTIVE}


class Probe:
    """Publishers, recording subscriptions and service calls on a private rclpy context."""

    def __init__(self, name="probe"):
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node(name, context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.received = {}
        self.diagnostics = {}
        self.diagnostic_stamps = {}  # status name → stamp of the last array carrying it [s]
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self._on_diagnostics, RELIABLE)

    def publisher(self, message_type, topic, sensor=True):
        return self.node.create_publisher(message_type, topic, qos_profile_sensor_data if sensor else RELIABLE)

    def record(self, message_type, topic, sensor=False):
        """Keep every message of ``topic`` (sensor QoS, best effort, for sensor topics)."""
        self.received[topic] = []
        self.node.create_subscription(message_type, topic, self.received[topic].append,
                                      qos_profile_sensor_data if sensor else RELIABLE)
        return self.received[topic]

    def _on_diagnostics(self, array):
        for status in array.status:
            self.diagnostics[status.name] = status
            self.diagnostic_stamps[status.name] = array.header.stamp.sec + 1e-9 * array.header.stamp.nanosec

    def spin_until(self, condition, timeout=20.0, on_tick=None, period=0.01):
        """Spin (calling ``on_tick`` once every ``period`` s of wall time, however many messages arrive meanwhile)
        until ``condition()`` holds; returns whether it did."""
        deadline = time.monotonic() + timeout
        next_tick = time.monotonic()
        while time.monotonic() < deadline:
            if on_tick is not None and time.monotonic() >= next_tick:
                on_tick()
                next_tick += period
            wait = period if on_tick is None else max(0.0, min(period, next_tick - time.monotonic()))
            self.executor.spin_once(timeout_sec=wait)
            if condition():
                return True
        return False

    def call(self, service_type, name, request, timeout=30.0, resend_after=3.0):
        """Call an idempotent service, sending the request again every ``resend_after`` s until one answer arrives.

        A request can be answered before the server has discovered the client's reply reader, and Fast DDS then
        drops the reply (ros2/rmw_fastrtps#392, #842); on a loaded machine that happens now and then."""
        client = self.node.create_client(service_type, name)
        if not self.spin_until(client.service_is_ready, timeout):
            raise TimeoutError(f"service {name} did not appear")
        deadline = time.monotonic() + timeout
        futures = []
        while time.monotonic() < deadline:
            futures.append(client.call_async(request))
            if self.spin_until(lambda: any(f.done() for f in futures), min(resend_after, deadline - time.monotonic())):
                return next(f for f in futures if f.done()).result()
        raise TimeoutError(f"service {name} did not answer")

    def change_state(self, node_name, transition_id, timeout=30.0):
        """Ask a lifecycle node for a transition; whether it reached the transition's goal state.

        ChangeState is not idempotent, so it is not simply sent again when no answer comes. Until one comes, the
        node's state is read every 3 s (GetState, idempotent): the goal state is success, a transition that takes
        longer on a loaded machine (a configure loading the model) is waited for, and a node still in the state the
        transition starts from never got the request (just after start-up, before the server's discovery of the
        client has finished) and is asked again."""
        client = self.node.create_client(ChangeState, f"{node_name}/change_state")
        if not self.spin_until(client.service_is_ready, timeout):
            raise TimeoutError(f"service {node_name}/change_state did not appear")
        request = ChangeState.Request()
        request.transition.id = transition_id
        futures = [client.call_async(request)]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.spin_until(lambda: any(f.done() for f in futures), min(3.0, max(0.0, deadline - time.monotonic()))):
                if any(f.result().success for f in futures if f.done()):
                    return True
                if len(futures) == 1:  # the only request, refused
                    return False
                futures = [f for f in futures if not f.done()]  # a repeated request, refused: the state says
            state = self.call(GetState, f"{node_name}/get_state", GetState.Request(), timeout).current_state.id
            if state == LIFECYCLE_GOAL_STATES[transition_id]:
                return True
            if state == LIFECYCLE_START_STATES[transition_id]:
                futures.append(client.call_async(request))
        return False

    def parameters(self, node_name, names, timeout=30.0):
        """{name: value} of ``names`` as node ``node_name`` holds them (None: not declared)."""
        request = GetParameters.Request(names=list(names))
        answer = self.call(GetParameters, f"/{node_name}/get_parameters", request, timeout)
        return {name: parameter_value_to_python(value) if value.type else None
                for name, value in zip(names, answer.values)}

    def diagnostic_values(self, name):
        status = self.diagnostics.get(name)
        return None if status is None else {kv.key: kv.value for kv in status.values}

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


class NodeSession:
    """A node under test in its own process, and a probe in this one to talk to it."""

    def __init__(self, executable, ros_args=(), probe_name="probe"):
        from .ros_processes import start

        self.process = start([executable], ros_args=list(ros_args))
        self.probe = Probe(probe_name)
        self.result = None

    def run(self, condition, tick=None, timeout=60.0):
        """Spin, calling ``tick`` every 5 ms, until ``condition()`` holds; the default ``timeout`` [s] covers the
        node's start-up on a loaded machine (a CI run once needed more than 20 s)."""
        return self.probe.spin_until(condition, timeout, on_tick=tick, period=0.005)

    def report(self):
        """Why a condition did not come, for an assertion's message: what the probe saw of the node (its last
        statuses, and how many endpoints matched each of the probe's topics), then the node stopped, with its exit
        code (−9: it hung, and was killed) and the end of its output."""
        node = self.probe.node
        statuses = {name: (status.message, {kv.key: kv.value for kv in status.values})
                    for name, status in self.probe.diagnostics.items()} or "none"
        matched = {**{p.topic_name: f"{p.get_subscription_count()} reader(s)" for p in node.publishers},
                   **{s.topic_name: f"{node.count_publishers(s.topic_name)} writer(s)" for s in node.subscriptions}}
        returncode, stdout, stderr = self.stop()
        return (f"diagnostics received: {statuses}; matched: {matched}; exit code {returncode}; "
                f"stdout ends: {stdout[-1500:]!r}; stderr ends: {stderr[-1500:]!r}")

    def stop(self):
        """Stop the node once; (returncode, stdout, stderr)."""
        from .ros_processes import stop

        if self.result is None:
            self.probe.close()
            self.result = stop(self.process)
        return self.result
