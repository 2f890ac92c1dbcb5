"""LLM generation backends (registered as role ``generator``)."""

from ._base import Generation, Generator, Message, Prompt

__all__ = ["Generation", "Generator", "Message", "Prompt"]
