"""Rule-based checkers: one module per task, final world + truth -> verdict of named checks."""
