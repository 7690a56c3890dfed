"""``tf.app.flags`` / ``tf.flags``: TensorFlow 1.x's command-line flags.

    FLAGS = tf.app.flags.FLAGS
    tf.app.flags.DEFINE_string("ps_hosts", "", "Comma-separated host:port pairs")
    tf.app.flags.DEFINE_integer("task_index", 0, "Index of the task within the job")

``--name=value``, ``--name value`` and, for booleans, ``--name`` / ``--noname`` are
understood (one or two dashes). Flags are parsed from ``sys.argv`` on the first read of a
value (or by ``tf.app.run()`` / ``FLAGS(argv)``); arguments that are not defined flags are
left for the program, as TensorFlow's ``tf.app.run`` does. Values may be assigned
(``FLAGS.job_name = "ps"``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


class FlagError(ValueError):
    """A flag defined twice, an unknown flag read, or a value that does not parse."""


@dataclass
class _Flag:
    name: str
    default: Any
    help: str
    kind: str
    parse: Callable[[str], Any]


def parse_integer(text: str) -> int:
    for base in (10, 0):  # "0x10" and "0o17" too
        try:
            return int(text, base)
        except ValueError:
            pass
    raise ValueError(f"{text!r} is not an integer")


def parse_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None


def parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("1", "true", "t", "yes", "y"):
        return True
    if lowered in ("0", "false", "f", "no", "n"):
        return False
    raise ValueError(f"{text!r} is not a boolean (true/false, 1/0, yes/no)")


class FlagValues:
    """The defined flags and their values (``FLAGS``)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_parsed", False)

    def define(self, name: str, default: Any, help: str, kind: str, parse: Callable[[str], Any]) -> None:
        if name in self._flags:
            raise FlagError(f"Flag --{name} is defined twice; define each flag once")
        self._flags[name] = _Flag(name, default, help, kind, parse)
        self._values.setdefault(name, default)

    def __getattr__(self, name: str) -> Any:
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"Unknown flag --{name}: define it first, e.g. "
                                 f"tf.app.flags.DEFINE_string({name!r}, default, help)")
        if not self._parsed:
            self(sys.argv)
        return self._values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(f"Cannot set unknown flag --{name}: define it first")
        self._values[name] = value

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __call__(self, argv: Sequence[str]) -> list[str]:
        """Parses ``argv`` (``argv[0]`` is the program); returns ``argv[0]`` followed by
        the arguments that are not defined flags.

        Raises:
            FlagError: a flag value that does not parse, or a flag missing its value.
        """
        rest = list(argv[:1])
        args = list(argv[1:])
        while args:
            arg = args.pop(0)
            if arg == "--":
                rest += args
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, has_value, text = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and not has_value and name.startswith("no"):
                negated = self._flags.get(name[2:])
                if negated is not None and negated.kind == "bool":
                    self._values[negated.name] = False
                    continue
            if flag is None:
                rest.append(arg)
                continue
            if not has_value:
                if flag.kind == "bool":
                    self._values[name] = True
                    continue
                if not args:
                    raise FlagError(f"Flag --{name} needs a value: --{name}=VALUE")
                text = args.pop(0)
            self._values[name] = self._convert(flag, text)
        object.__setattr__(self, "_parsed", True)
        return rest

    @staticmethod
    def _convert(flag: _Flag, text: str) -> Any:
        try:
            return flag.parse(text)
        except ValueError as exc:
            raise FlagError(f"--{flag.name}={text}: {exc} ({flag.kind} flag: {flag.help})") from None

    def flag_values_dict(self) -> dict[str, Any]:
        """Every flag's current value, by name."""
        if not self._parsed:
            self(sys.argv)
        return dict(self._values)

    def is_parsed(self) -> bool:
        return self._parsed


FLAGS = FlagValues()


def DEFINE_string(name: str, default: str | None, help: str) -> None:  # noqa: N802 - TF's name
    FLAGS.define(name, default, help, "string", str)


def DEFINE_integer(name: str, default: int | None, help: str) -> None:  # noqa: N802
    FLAGS.define(name, default, help, "integer", parse_integer)


def DEFINE_float(name: str, default: float | None, help: str) -> None:  # noqa: N802
    FLAGS.define(name, default, help, "float", parse_float)


def DEFINE_boolean(name: str, default: bool | None, help: str) -> None:  # noqa: N802
    FLAGS.define(name, default, help, "bool", parse_bool)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name: str, default: Sequence[str] | str | None, help: str) -> None:  # noqa: N802
    if isinstance(default, str):
        default = [p for p in default.split(",") if p]
    FLAGS.define(name, None if default is None else list(default), help, "list",
                  lambda text: [p.strip() for p in text.split(",") if p.strip()])


def DEFINE_enum(name: str, default: str | None, enum_values: Sequence[str], help: str) -> None:  # noqa: N802
    allowed = list(enum_values)

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"{text!r} is not one of {allowed}")
        return text

    FLAGS.define(name, default, help, "enum", parse)
