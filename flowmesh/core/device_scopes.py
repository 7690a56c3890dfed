"""How ``tf.device`` and ``tf.colocate_with`` scopes decide a new op's requested device.

The rules are TensorFlow's (``Graph._apply_device_functions`` and the colocation block
of ``Graph._create_op_helper``), checked against ``tensorflow.compat.v1`` in the tests:

* The device stack is walked from the **innermost** scope outwards. The op starts with
  no device. A string / ``DeviceSpec`` scope *fills the fields the op does not have yet*
  (so inner scopes win field by field: ``/job:ps`` around ``/task:1`` gives
  ``/job:ps/task:1``; ``/gpu:1`` around ``/device:CPU:*`` gives ``/device:CPU:1``).
  An empty string scope changes nothing. A **device function** receives the op (with the
  device chosen by the scopes inside it) and its result *replaces* the device.
  ``tf.device(None)`` stops the walk: scopes outside it are ignored.
* ``tf.colocate_with(op)`` hides every enclosing device scope (colocation is stronger
  than device functions) and adds ``op``'s colocation groups to the new op. After the
  device scopes opened *inside* it ran, the new op takes the device of the innermost
  colocation target that has one.

Deliberate differences: device strings returned by device functions are validated and
canonicalized (``'/gpu:0'`` becomes ``'/device:GPU:0'``), and a device function returning
``None`` is a ``TypeError`` that says to return ``''`` instead (TensorFlow fails too, with a
less helpful message).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from flowmesh.core.device_spec import DeviceSpec
from flowmesh.core.operation import Operation
from flowmesh.core.tensor import Tensor

DeviceScopeEntry = DeviceSpec | Callable[[Any], Any] | None


def normalize_scope_entry(device_name_or_function: Any) -> DeviceScopeEntry:
    """Validates a ``tf.device`` argument when the scope is entered.

    Args:
        device_name_or_function: a device string, a ``DeviceSpec``, a function
            ``op -> device string or DeviceSpec``, or ``None``.

    Returns:
        A parsed ``DeviceSpec``, the function, or ``None``.

    Raises:
        InvalidArgumentError: for a malformed device string.
        TypeError: for any other kind of argument.
    """
    entry = device_name_or_function
    if entry is None or isinstance(entry, DeviceSpec):
        return entry
    if isinstance(entry, (str, bytes)):
        return DeviceSpec.from_string(entry)
    if callable(entry):
        return entry
    to_string = getattr(entry, "to_string", None)  # e.g. a tf.DeviceSpec from TensorFlow
    if callable(to_string):
        return DeviceSpec.from_string(to_string())
    raise TypeError(
        f"tf.device expects a device string, DeviceSpec, function or None; got {entry!r}"
    )


def device_from_scopes(stack: Sequence[DeviceScopeEntry], op: Operation) -> str:
    """The canonical device string the device scopes in ``stack`` give ``op``.

    ``op.device`` is updated while walking so that device functions see the device chosen
    by the scopes nested inside them, as in TensorFlow.
    """
    current = DeviceSpec()
    op._device = ""
    for entry in reversed(stack):
        if entry is None:
            break
        if isinstance(entry, DeviceSpec):
            if entry.is_empty:
                continue
            current = current.fill_unset_from(entry)
        else:
            current = _call_device_function(entry, op)
        op._device = current.to_string()
    return op._device


def _call_device_function(fn: Callable[[Any], Any], op: Operation) -> DeviceSpec:
    result = fn(op)
    if isinstance(result, DeviceSpec):
        return result
    if isinstance(result, (str, bytes)):
        return DeviceSpec.from_string(result)
    to_string = getattr(result, "to_string", None)
    if callable(to_string):
        return DeviceSpec.from_string(to_string())
    name = getattr(fn, "__qualname__", repr(fn))
    raise TypeError(
        f"Device function {name} returned {result!r} for op '{op.name}' ({op.type}); a device "
        "function must return a device string or DeviceSpec ('' for no device)."
    )


def colocation_target(value: Any) -> Operation:
    """The op to colocate with for ``tf.colocate_with(value)``: an Operation, a Tensor's
    op, or a variable's handle op.

    Raises:
        TypeError: when ``value`` is none of these.
    """
    if isinstance(value, Operation):
        return value
    if isinstance(value, Tensor):
        return value.op
    handle = getattr(value, "handle", None)
    if isinstance(handle, Tensor):
        return handle.op
    as_element = getattr(value, "_as_graph_element", None)
    if callable(as_element):
        element = as_element()
        if isinstance(element, (Operation, Tensor)):
            return colocation_target(element)
    raise TypeError(f"colocate_with expects an Operation, Tensor or Variable, got {value!r}")


def apply_colocation(stack: Sequence[Operation], op: Operation) -> None:
    """Gives ``op`` the colocation groups of every op in ``stack`` and the device of the
    innermost one that has a device (no-op for an empty stack)."""
    if not stack:
        return
    groups: set[str] = set()
    device_set = False
    for target in reversed(stack):
        groups.update(target._colocation or (target._name,))
        if target._device and not device_set:
            op._device = target._device
            device_set = True
    op._colocation = tuple(sorted(groups))
