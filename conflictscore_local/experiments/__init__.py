"""The paper's two experiments as library functions (and the ``generate`` / ``regenerate`` commands).

``generate_reports`` writes a report per item under a prompting strategy (standard, balanced,
super-balanced), ready for scoring; ``run_regenerate`` measures Regenerated-RAG on TruthfulQA
multiple choice against closed-book, RAG and a prompt-only control. Prompts live in
:mod:`.prompts`, versioned. Nothing heavy is imported here.
"""

from .generate import generate_file, generate_reports
from .prompts import CONDITIONS, PROMPT_VERSION, STRATEGIES
from .regenerate import Answer, regenerate_file, run_regenerate
from .truthfulqa import MCQuestion, make_question, parse_option, read_truthfulqa

__all__ = [
    "Answer",
    "CONDITIONS",
    "MCQuestion",
    "PROMPT_VERSION",
    "STRATEGIES",
    "generate_file",
    "generate_reports",
    "make_question",
    "parse_option",
    "read_truthfulqa",
    "regenerate_file",
    "run_regenerate",
]
