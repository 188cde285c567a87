def example():
    return 42
