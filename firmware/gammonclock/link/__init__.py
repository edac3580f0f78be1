"""The table's link to the hall (SPEC §14), the clock's side: publishing the journal's events
over MQTT until the hall acknowledges them (`client`, `connection`, `state`, `publisher`,
`outbox`) and taking the director's requests (`requests`); `signal` is its hook on the clock,
importable without paho."""
