"""Describing a new robot to the suite, apart from the runtime: ``humanoid-balance init`` (:mod:`.robot_init`, from
what :mod:`.robot_setup` finds in the URDF: soles, legs, limbs, stance) and ``humanoid-balance import-sdf``
(:mod:`.sdf_import`). The runtime (model, estimation, control, mapping, nodes, sim, bench, demo, recording, launch
files) reads the files they write and never imports this package; the command line imports it only in those
commands and check-model's. No ROS."""
