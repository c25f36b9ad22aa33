"""Thin rclpy nodes: parameters, topics, one call into the core per callback."""
