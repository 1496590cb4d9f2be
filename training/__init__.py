"""Training on the verified trajectories (GRPO with trl/transformers)."""
