"""Pure text rules: managed blocks, the agent.md prefix guard, front matter."""
