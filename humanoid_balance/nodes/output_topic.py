"""A node's output: published over DDS only while something subscribes there (serializing for nobody costs as much
as a small core), and, for a lifecycle node, only while it is active."""
from rclpy.lifecycle import LifecyclePublisher

__all__ = ["OutputTopic"]


class OutputTopic:
    """A publisher that publishes only to someone (see the module)."""

    __slots__ = ("dds", "lifecycle")

    def __init__(self, dds):
        self.dds = dds
        self.lifecycle = isinstance(dds, LifecyclePublisher)

    def active(self):
        """Whether the node may publish: always, or while a lifecycle node is active."""
        return not self.lifecycle or self.dds.is_activated

    def publish(self, message):
        if self.active() and self.dds.get_subscription_count():
            self.dds.publish(message)

    def get_subscription_count(self):
        return self.dds.get_subscription_count()

    def wanted(self):
        """Whether a message published now would reach anyone: worth building one that only people look at."""
        return self.active() and self.dds.get_subscription_count() > 0
