"""Checks: what a server sent, judged. Rules with stable ids and severities (rules.py), tool definitions
reviewed (definitions.py), every frame validated against its revision's schema and the observed-call
rules (frames.py), arguments made up from a schema (sample.py), a whole check of one server (run.py)
and its reports (report.py). Qt-free."""
