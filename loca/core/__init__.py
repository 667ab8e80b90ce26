"""The low layer: world format, virtual clock, seeded RNG, tokenizer, length targets, the
script protocol and PDF page texts (extracted ahead in a light worker process). It imports
nothing else of the project, so every other layer may use it."""
