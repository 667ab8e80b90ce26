"""LOCA gym: long-context agent environments whose size in tokens is a parameter."""

__version__ = "0.1.0"
