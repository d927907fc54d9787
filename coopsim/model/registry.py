"""String-label registries for robot types and modules (the plugin points).

A plugin registers a class under a label; scenarios and the network name things by that label.
``coopsim list`` prints what is registered.
"""

from __future__ import annotations

from typing import Callable, Generic, Iterator, TypeVar

from .errors import RegistryError

T = TypeVar("T")


class Registry(Generic[T]):
    """A mapping from label to class that refuses duplicates and unknown look-ups clearly.

    Args:
        kind: What the registry holds, for messages ("robot type", "module").
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, label: str) -> Callable[[T], T]:
        """Class decorator: register the decorated class under ``label``."""

        def _add(item: T) -> T:
            if label in self._items:
                raise RegistryError(f"{self.kind} {label!r} is registered twice")
            self._items[label] = item
            return item

        return _add

    def get(self, label: str) -> T:
        """Return the item under ``label``.

        Raises:
            RegistryError: nothing is registered under that label.
        """
        try:
            return self._items[label]
        except KeyError:
            known = ", ".join(sorted(self._items)) or "none"
            raise RegistryError(f"unknown {self.kind} {label!r} (known: {known})") from None

    def __contains__(self, label: object) -> bool:
        return label in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._items))

    def items(self) -> list[tuple[str, T]]:
        """(label, item) pairs sorted by label."""
        return sorted(self._items.items())


#: Robot types: label -> RobotType subclass (see :mod:`coopsim.plugins.robots`).
ROBOT_TYPES: Registry = Registry("robot type")
#: Hardware modules: label -> Module subclass (see :mod:`coopsim.plugins.modules`).
MODULES: Registry = Registry("module")
