"""The journal (SPEC §11): the append-only, sealed record of a match, the source of truth.

`journal` writes, seals and reads the file and holds the device key; `snapshot` encodes an
engine so a long match resumes without replaying from its first press."""
