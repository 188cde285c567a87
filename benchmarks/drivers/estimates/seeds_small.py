"""The seeds' kernels at a sixteenth of seeds_large.py's sizes (_seeds.py)."""
from _seeds import run


def example():
    run(1 / 16)
