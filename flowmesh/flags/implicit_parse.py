"""TensorFlow 1.x's layer over ``absl.flags``: ``FLAGS`` that parse ``sys.argv`` when a value
is first read, and ``DEFINE_*`` that accept TF1's old keyword names.

absl's own ``FLAGS`` raises ``UnparsedFlagAccessError`` when a value is read before
``FLAGS(argv)``; TensorFlow 1.x programs read ``FLAGS.x`` at any time, so TensorFlow wraps
``FLAGS`` to parse on the first read. flowmesh parses with ``known_only=True`` there (as
``tf.app.run`` does): arguments that are not defined flags stay for the program, where
TensorFlow's implicit parse raises ``UnrecognizedFlagError`` for them (the familiar
"Unknown command line flag 'f'" in notebooks).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

from absl import flags as absl_flags

from flowmesh.flags.tf_decorator import make_decorator

# The wrappers below define flags on behalf of their callers: absl attributes each flag to
# the first calling module that has not disclaimed key flags (the program's), as TensorFlow's
# flags module arranges for itself.
absl_flags.disclaim_key_flags()

_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


class ImplicitlyParsedFlagValues:
    """An ``absl.flags.FlagValues`` (``FLAGS``) that parses ``sys.argv`` (known flags only)
    the first time a flag's value is read before any explicit parse. Every other attribute,
    item and call goes to the wrapped object, so ``FLAGS(argv)``, ``FLAGS["x"].value``,
    ``FLAGS.x = value`` and ``"x" in FLAGS`` behave as absl's."""

    def __init__(self, flag_values: absl_flags.FlagValues) -> None:
        self.__dict__["__wrapped"] = flag_values

    def __getattribute__(self, name: str) -> Any:
        if name == "__dict__":
            return super().__getattribute__(name)
        return self.__dict__["__wrapped"].__getattribute__(name)

    def __getattr__(self, name: str) -> Any:
        wrapped = self.__dict__["__wrapped"]
        if not wrapped.is_parsed():
            wrapped(sys.argv, known_only=True)
        return wrapped.__getattr__(name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__["__wrapped"].__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        self.__dict__["__wrapped"].__delattr__(name)

    def __dir__(self) -> list[str]:
        return self.__dict__["__wrapped"].__dir__()

    def __getitem__(self, name: str) -> absl_flags.Flag:
        return self.__dict__["__wrapped"].__getitem__(name)

    def __setitem__(self, name: str, flag: absl_flags.Flag) -> None:
        self.__dict__["__wrapped"].__setitem__(name, flag)

    def __contains__(self, name: str) -> bool:
        return self.__dict__["__wrapped"].__contains__(name)

    def __len__(self) -> int:
        return self.__dict__["__wrapped"].__len__()

    def __iter__(self) -> Iterator[str]:
        return self.__dict__["__wrapped"].__iter__()

    def __str__(self) -> str:
        return self.__dict__["__wrapped"].__str__()

    def __call__(self, *args: Any, **kwargs: Any) -> list[str]:
        return self.__dict__["__wrapped"].__call__(*args, **kwargs)


def accept_old_keyword_names(define: Callable[..., Any]) -> Callable[..., Any]:
    """``define`` also taking TF1's keyword names ``flag_name``, ``default_value`` and
    ``docstring`` (for absl's ``name``, ``default``, ``help``), with a deprecation warning."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        old = [name for name in _RENAMED_ARGUMENTS if name in kwargs]
        for name in old:
            kwargs[_RENAMED_ARGUMENTS[name]] = kwargs.pop(name)
        if old:
            logging.getLogger("flowmesh").warning(
                "Use of the keyword argument names (flag_name, default_value, docstring) is "
                "deprecated, please use (name, default, help) instead.")
        return define(*args, **kwargs)

    return make_decorator(define, wrapper)
