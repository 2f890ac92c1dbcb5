"""Pipeline design choices: chunking, pruning, claim sampling, the cascade, checkpoints and the embedding store."""
