"""The SB3 trainer: MaskablePPO (sb3-contrib) driven by the run layer's schedule."""
