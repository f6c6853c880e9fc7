"""The campaign simulator behind ``tormortem simulate``: a discrete-event model of a large
training run (campaign.py), the logs it would leave in the real formats (writers_*.py), its
ground truth (truth.py) and a vectorised Monte Carlo of the TOR distribution (montecarlo.py)."""
