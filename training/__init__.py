"""Training data and GRPO training with trl/transformers."""
