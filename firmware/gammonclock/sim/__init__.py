"""The simulator (the real firmware on mock pins and emulated panels), its scripts and the hall
demo (a broker, a hall and robot-played clocks on one machine)."""
