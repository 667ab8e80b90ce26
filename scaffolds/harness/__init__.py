"""Tools the scaffold serves itself (memory, code execution) and the hub that dispatches every call."""
