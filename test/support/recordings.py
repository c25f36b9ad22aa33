"""Reading a recording back with an MCAP reader independent of the writer: the ``mcap`` library and
``mcap-ros2-support``'s CDR decoder, which builds each message from the ros2msg schema stored in the file."""
import array
from collections import defaultdict
from typing import NamedTuple

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory


class Recording(NamedTuple):
    """What an .mcap file holds: the header's profile, each topic's type, and its messages in file order."""

    profile: str
    types: dict           # topic → schema name (pkg/msg/Name)
    encodings: dict       # topic → (message encoding, schema encoding)
    messages: dict        # topic → [(log time [ns], decoded message)]


def read_recording(path, topics=None):
    """Decode every message of the .mcap file ``path`` (of ``topics`` only, if given)."""
    types, encodings, messages = {}, {}, defaultdict(list)
    with open(path, "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        profile = reader.get_header().profile
        for schema, channel, message, decoded in reader.iter_decoded_messages(topics=topics, log_time_order=False):
            types[channel.topic] = schema.name
            encodings[channel.topic] = (channel.message_encoding, schema.encoding)
            messages[channel.topic].append((message.log_time, decoded))
    return Recording(profile, types, encodings, dict(messages))


def same_fields(published, decoded, path="message"):
    """Assert that the decoded message has every field of the rclpy message ``published``, equal."""
    if hasattr(published, "get_fields_and_field_types"):
        for field in published.get_fields_and_field_types():
            same_fields(getattr(published, field), getattr(decoded, field), f"{path}.{field}")
    elif isinstance(published, (list, tuple, array.array, np.ndarray)):
        published = list(published)
        assert len(published) == len(decoded), f"{path}: {len(published)} elements recorded as {len(decoded)}"
        for k, (a, b) in enumerate(zip(published, decoded)):
            same_fields(a, b, f"{path}[{k}]")
    elif isinstance(published, bytes):   # a ROS byte field: rclpy gives bytes of length 1
        assert published == (bytes([decoded]) if isinstance(decoded, int) else bytes(decoded)), path
    else:
        assert published == decoded, f"{path}: {published!r} recorded as {decoded!r}"
