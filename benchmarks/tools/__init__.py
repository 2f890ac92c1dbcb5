"""Tools over the recorded results: rendering the docs' figures, the tree's size, portable paths."""
