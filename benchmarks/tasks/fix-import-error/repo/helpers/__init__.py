"""Small helpers shared by the scripts in this repository."""
