"""The match engine and its rules, pure: explicit timestamps in, state and effects out.

Nothing here reads a clock, a pin, a file or the network (an import-linter contract in
pyproject.toml holds it to that). `engine.Engine` is the face; `match` applies one input, the
rules live in `rules`, `timecontrol`, `transition`, `play`, `dice_rules` and the arbiter's in
`arbiter` (the words), `arbiter_actions` and `arbiter_mode`; `effects` is what a step reports.
"""
