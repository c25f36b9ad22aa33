"""What a launch may leave behind: the ROS 2 parameter files it wrote for its nodes in the temporary folder."""
import tempfile
from pathlib import Path


def parameter_files():
    """The ROS 2 parameter files in the temporary folder now."""
    found = set()
    for path in Path(tempfile.gettempdir()).iterdir():
        try:
            if path.is_file() and "ros__parameters" in path.read_text(errors="replace")[:4096]:
                found.add(path)
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found
