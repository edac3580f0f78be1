"""gammonclock: the firmware of a tournament clock for backgammon and long nardy."""

__version__ = "0.1.0"
