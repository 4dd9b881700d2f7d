"""What the model sees each step, kept under a token budget."""
