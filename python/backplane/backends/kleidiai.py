"""backplane.backends.kleidiai: Arm KleidiAI micro-kernels, never built on x86."""

__all__ = ["is_available"]


def is_available():
    return False
