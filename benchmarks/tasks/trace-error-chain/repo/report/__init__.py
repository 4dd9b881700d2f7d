"""Revenue reports from order exports."""
