"""The command line: `gammonclock …` (`main`: its parser, `simulate` and `run`; `records`: replay,
verify, export; `arbiter`: arbiter and usb-stick; `common`: what they share) and `gammonclock hall
…` (`hall`)."""
