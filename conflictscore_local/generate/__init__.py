"""LLM generation backends (registered as role ``generator``)."""

from ._base import Generation, Generator, GeneratorBase, Message, Prompt

__all__ = ["Generation", "Generator", "GeneratorBase", "Message", "Prompt"]
