"""What the package reads and writes: input items, scored rows, the one summary schema, the judgment cache."""
