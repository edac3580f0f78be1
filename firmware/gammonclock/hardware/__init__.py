"""The device around the engine: buttons, buzzer, dice reader, panels (each with a no-op twin)."""
