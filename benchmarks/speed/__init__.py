"""How fast: the judge runtimes, the whole pipeline, start-up, serving and the CPU peers."""
