"""The low layer: world format, virtual clock, seeded RNG, tokenizer, length targets and the
script protocol. It imports nothing else of the project, so every other layer may use it."""
