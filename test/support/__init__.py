"""Helpers the tests share (robots, ROS 2 probes and processes, recordings, the colcon install space); imported as
``support.<module>`` with test/ on ``sys.path`` (pytest puts it there for test/conftest.py)."""
