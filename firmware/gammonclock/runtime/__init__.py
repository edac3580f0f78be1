"""The clock's runtime on the Pi, the shell around the core: the service loop (`service`), the
match being kept and journaled (`session`), the next match (`lifecycle`), the arbiter's socket,
the USB stick, systemd's notify protocol, and the whole device put together (`device`)."""
