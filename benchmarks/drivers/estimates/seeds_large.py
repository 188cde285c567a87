"""The seeds' kernels at the sizes their talks benchmark (_seeds.py)."""
from _seeds import run


def example():
    run(1.0)
