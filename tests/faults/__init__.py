"""`trilha serve` as a real process, killed: the fault harness and the dead-worker tests."""
