"""Default stage implementations (orient, sweep, handoff, check_handoff)."""
