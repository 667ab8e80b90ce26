"""Canvas tool modules, one per resource, registering on `common.toolbox`."""
