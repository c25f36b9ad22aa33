"""The closed-loop demo: scripted scenario, in-process runner, report."""
