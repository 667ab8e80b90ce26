"""Adapters that run the gym's tasks under other evaluation frameworks (inspect_ai)."""
