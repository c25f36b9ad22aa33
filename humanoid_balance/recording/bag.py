"""A rosbag2 recording in MCAP storage, written by rosbags: CDR messages, ros2msg schemas, metadata.yaml.

The result is what ``ros2 bag record -s mcap`` writes: a directory holding ``metadata.yaml`` and ``<name>.mcap``
(zstd-compressed chunks), each topic with its type, its type hash (RIHS01) and the QoS its publishers offered.
``ros2 bag info``/``play`` take the directory; Foxglove and PlotJuggler open the ``.mcap`` file.
"""
import shutil
from pathlib import Path

from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

__all__ = ["TYPESTORE", "Bag", "bag_path", "bag_qos"]

TYPESTORE = get_typestore(Stores.ROS2_KILTED)
"""Message definitions and type hashes of the standard ROS 2 Kilted messages."""


def bag_path(path):
    """The rosbag2 directory for ``path``: a name ending in ``.mcap`` stands for the directory of that stem."""
    path = Path(path)
    return path.with_suffix("") if path.suffix == ".mcap" else path


def bag_qos(profile):
    """An rclpy QoSProfile (as the graph reports a publisher's) as rosbag2 metadata's offered QoS."""
    def duration(value):
        return QosTime(*divmod(value.nanoseconds, 1_000_000_000))

    return Qos(QosHistory[profile.history.name], profile.depth, QosReliability[profile.reliability.name],
               QosDurability[profile.durability.name], duration(profile.deadline), duration(profile.lifespan),
               QosLiveliness[profile.liveliness.name], duration(profile.liveliness_lease_duration),
               profile.avoid_ros_namespace_conventions)


class Bag:
    """A rosbag2 directory being written. Topics are absolute names; messages are CDR bytes stamped in ns.

    Args:
        path: the directory to create (see :func:`bag_path`); one that already holds a recording (a
            metadata.yaml) is replaced, anything else there is an error.
        description: what was recorded (key → text), kept in metadata.yaml's custom_data.
    """

    def __init__(self, path, description):
        self.path = bag_path(path)
        if self.path.exists():
            if not (self.path / "metadata.yaml").is_file():
                raise FileExistsError(f"{self.path} exists and is not a rosbag2 recording: choose another path")
            shutil.rmtree(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self.writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
        for key, text in description.items():
            self.writer.set_custom_data(key, str(text))
        self.writer.open()
        self.connections = {}
        self.counts = {}
        self.closed = False

    @property
    def file(self):
        """The .mcap file inside the directory."""
        return self.path / f"{self.path.name}.mcap"

    def add_topic(self, topic, msgtype, offered_qos=(), type_hash=None):
        """Declare ``topic`` of ``msgtype`` (``pkg/msg/Name``) with its publishers' QoS (rclpy QoSProfiles);
        ``type_hash``: the RIHS01 hash the graph reports (default: the type store's). Returns False when the topic
        is declared already or its type is not one of :data:`TYPESTORE`'s (its definition cannot be written)."""
        if topic in self.connections or msgtype not in TYPESTORE.fielddefs:
            return False
        definition, _ = TYPESTORE.generate_msgdef(msgtype, ros_version=2)
        self.connections[topic] = self.writer.add_connection(
            topic, msgtype, msgdef=definition, rihs01=type_hash or TYPESTORE.hash_rihs01(msgtype),
            offered_qos_profiles=[bag_qos(profile) for profile in offered_qos])
        self.counts[topic] = 0
        return True

    def write(self, topic, stamp, data):
        """One CDR-serialized message of a declared topic, logged at ``stamp`` [ns]."""
        self.writer.write(self.connections[topic], stamp, data)
        self.counts[topic] += 1

    def close(self):
        """Finish the .mcap file and write metadata.yaml (the first call; later ones do nothing)."""
        if not self.closed:
            self.writer.close()
            self.closed = True
