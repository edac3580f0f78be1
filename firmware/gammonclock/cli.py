"""`gammonclock …`: the command line. Thin: it parses arguments and calls into the package."""

from __future__ import annotations

import argparse
import json
import signal
import sys

from .config import ConfigError, load_config
from .script import ScriptError, load_script
from .simulate import account_line, simulate

EXIT_BAD_INPUT = 2


def _simulate(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
        if args.script is None:
            print("gammonclock simulate: --script FILE is needed (the interactive simulator "
                  "comes with the device shell)", file=sys.stderr)
            return EXIT_BAD_INPUT
        script = load_script(args.script, config.rules.hold_ns)
    except (ConfigError, ScriptError) as exc:
        print(f"gammonclock: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT

    def tell(engine, effects):  # type: ignore[no-untyped-def]
        for effect in effects:
            print(account_line(engine, effect))

    engine = simulate(config.rules, script.inputs, script.end,
                      observe=None if args.json else tell)
    if args.json:
        print(json.dumps(engine.state_json()))
    else:
        print(json.dumps(engine.state_json(), indent=2))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gammonclock",
                                     description="Tournament clock for backgammon and long nardy.")
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("simulate", help="run a match config with a script in virtual time")
    sim.add_argument("--config", required=True, help="the match config (TOML)")
    sim.add_argument("--script", help="the script of inputs (SPEC §9)")
    sim.add_argument("--json", action="store_true",
                     help="print only the final state as one JSON object")
    sim.set_defaults(handler=_simulate)
    return parser


def main(argv: list[str] | None = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `gammonclock … | head` ends quietly
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
