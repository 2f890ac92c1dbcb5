"""The backend framework: arguments, the Backend base, the registry with its namespaces and entry points, local
checkpoints and the model store."""
