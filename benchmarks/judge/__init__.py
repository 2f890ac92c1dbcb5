"""How good a judge is: ConflictBench, the dev sets, checklist, sanity pairs, decision rule, ship gate, model card."""
