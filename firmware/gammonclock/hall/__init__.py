"""The director's hall (SPEC §14), a program of its own: the MQTT intake (`server`, `intake`,
`acks`, `mqtt`), the journals' archive (`archiving`, `archive`), the director's actions
(`actions`), the web page (`web`, `view`, `static/`), accounts, pairings, results, and the
broker's shipped ACL and config (`broker/`). It never imports the clock's runtime."""
