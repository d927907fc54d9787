"""Cyclone DDS topics whose endpoints announce no XTypes type information, as ROS 2's own
``rmw_cyclonedds_cpp`` announces none (docs/ros2.md, *How coopsim talks to ROS 2*).

The binding derives XTypes type objects from a Python struct and Cyclone sends them in
discovery. Fast DDS 3 (ROS 2 Kilted and later) derives its own from the ROS message, and they
differ for every type holding a sequence or an array (the element flags of a plain sequence
identifier, for one): Cyclone then asks Fast DDS's type lookup service, never resolves the
type, and never matches the reader (only ``/clock`` and ``cmd_vel`` worked). Without type
information on one side, every RMW matches by the type name alone (Fast DDS 2 and 3, Cyclone),
so coopsim's endpoints announce none.

The binding cannot make a topic without type information (it builds its serializer's
descriptor from it when the topic is made), and Cyclone asks the topic's type object for its
information again for each writer and reader. So the information is taken off the type object
once the topic exists (its serialized size set to 0, which Cyclone reads as "none"), and put
back while another topic of the same type is made (Cyclone shares one type object among the
topics of one Python class in a domain, and the new topic's descriptor is built from it). The
binding keeps the serialized information and its size side by side in its type object
(``ddspy_sertype_t``); they are found by their value, not at an offset of one binding version,
and a type whose information is not found keeps announcing it (a warning says so).

A type object lives while a topic of it does: each record here names the participants whose
topics hold it, and a participant's records end when it closes (:func:`release`, after the
participant is deleted at once), so no record outlives its type object.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
import types
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: Held while type information is put back, and while endpoints are made (so that none is
#: made while it is back).
ENDPOINTS = threading.RLock()


class _Hidden:
    """The size slot of one type object's information, and who holds the type object."""

    def __init__(self, slot: int, size: int) -> None:
        self.slot, self.size, self.holders = slot, size, set()

    def show(self, on: bool) -> None:
        ctypes.c_uint32.from_address(self.slot).value = self.size if on else 0


_HIDDEN: dict[int, _Hidden] = {}  # type object address -> its record
_BY_CLASS: dict[type, set[int]] = {}  # Python class -> addresses of its type objects


def untyped_topic(owner, name: str, datatype):
    """A topic of ``datatype`` named ``name`` on ``owner.participant`` (a
    :class:`~.dds.Participant`) whose endpoints made from now on announce no type
    information."""
    from cyclonedds.topic import Topic
    datatype = _own(datatype)
    with ENDPOINTS:
        hidden = [_HIDDEN[a] for a in _BY_CLASS.get(datatype, ())]
        for h in hidden:
            h.show(True)
        try:
            topic = Topic(owner.participant, name, datatype)
        finally:
            for h in hidden:
                h.show(False)
        address = _sertype(topic)
        record = _HIDDEN.get(address) if address else None
        if record is None and address:
            record = _hide(address, datatype)
        if record is None:
            log.warning("ros2: %s announces XTypes type information: ROS 2 Kilted's Fast DDS "
                        "will not match it (docs/ros2.md)", name)
            return topic
        _HIDDEN[address] = record
        _BY_CLASS.setdefault(datatype, set()).add(address)
        record.holders.add(id(owner))
        return topic


@functools.lru_cache(maxsize=None)
def _own(datatype):
    """A class of the bridge's own for ``datatype`` (the same name, fields and XTypes data):
    Cyclone shares a type object only among topics of one Python class, so a topic another
    part of the process makes of ``datatype`` itself (a test's reader) gets a type object of
    its own, with its type information, rather than the bridge's without."""
    from cyclonedds.idl import IdlStruct
    datatype.__idl__.fill_type_data()
    copy = dataclass(types.new_class(datatype.__name__, (IdlStruct,),
                                     {"typename": datatype.__idl_typename__},
                                     lambda ns: ns.update(
                                         __annotations__=dict(datatype.__annotations__))))
    copy.__idl__.populate()
    copy.__idl__._xt_data = datatype.__idl__._xt_data
    copy.__idl__._xt_bytedata = datatype.__idl__._xt_bytedata
    return copy


def release(owner) -> None:
    """Forget the type objects ``owner`` (a closed participant) held, where no other holds
    them."""
    with ENDPOINTS:
        for address, record in list(_HIDDEN.items()):
            record.holders.discard(id(owner))
            if not record.holders:
                del _HIDDEN[address]
                for addresses in _BY_CLASS.values():
                    addresses.discard(address)


def _sertype(topic) -> int:
    """The address of ``topic``'s type object (0 when the library will not say)."""
    try:
        from cyclonedds.core import Entity
        get = Entity._dll_handle.dds_get_entity_sertype
    except (AttributeError, ImportError):
        return 0
    get.restype, get.argtypes = ctypes.c_int32, [ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
    sertype = ctypes.c_void_p()
    if get(topic._ref, ctypes.byref(sertype)) < 0:
        return 0
    return sertype.value or 0


def _hide(address: int, datatype) -> _Hidden | None:
    """Take the type information off the type object at ``address``; its record, or None
    where the information was not found."""
    info = (getattr(datatype.__idl__, "_xt_bytedata", None) or (None,))[0]
    if not info:
        return None
    size = len(info)
    for at in range(8, 256, 8):  # the pointer to the information, then its uint32 size
        data = ctypes.c_void_p.from_address(address + at).value
        for gap in (8, 12):  # right after the pointer, or after a padding word
            slot = address + at + gap
            if (data and ctypes.c_uint32.from_address(slot).value == size
                    and ctypes.string_at(data, size) == info):
                record = _Hidden(slot, size)
                record.show(False)
                return record
    return None
