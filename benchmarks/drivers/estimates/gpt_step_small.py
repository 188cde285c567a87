"""A GPT training step (_gpt.py): 2 layers, d=512, 8 heads, 8 × 512 tokens, vocab 8192."""
from _gpt import step


def example():
    step(vocab=8192, d=512, h=8, layers=2, batch=8, seq=512)
