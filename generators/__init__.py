"""World generators: params + seed + virtual clock -> a world directory (rows, files, truth).
One module per task; shared helpers in `common`."""
