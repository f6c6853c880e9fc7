"""Integration tests against a real Slurm started by the harness (marker ``slurm``)."""
