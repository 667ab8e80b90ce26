"""Agent scaffolds: the ReAct loop, model clients, the episode ledger and scripted agents."""
