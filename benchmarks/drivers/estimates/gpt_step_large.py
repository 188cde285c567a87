"""A GPT training step (_gpt.py): 4 layers, d=1024, 16 heads, 8 × 1024 tokens, vocab 32768."""
from _gpt import step


def example():
    step(vocab=32768, d=1024, h=16, layers=4, batch=8, seq=1024)
