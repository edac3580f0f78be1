"""The journal (SPEC §11): the append-only, sealed record of a match, the source of truth.

`records` is the format (a record's fields, its seal, the checks a record read must pass), `key`
the device key that seals it, `writer` and `reader` write and read a file, `verify` checks its
chain and seals; `inputs` is what a record holds of an input, `snapshot` an engine's state in a
record, `replay` a match rebuilt from a journal by the same engine, and `files` a state folder's
journals in order."""
