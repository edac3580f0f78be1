"""The match and device configuration (SPEC §10): every key's schema (`schema`), loading a
file into rules and a device config (`loading`), and reading a config back in words
(`readback`)."""
