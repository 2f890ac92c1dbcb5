"""The package's version, in a leaf module that every layer may import (the façade re-exports it)."""

__version__ = "0.2.0"
