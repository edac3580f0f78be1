"""The command line: `gammonclock …` (`main`) and `gammonclock hall …` (`hall`)."""
