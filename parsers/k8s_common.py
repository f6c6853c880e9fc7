"""Helpers shared by the Kubernetes parsers (events table, events JSON, pods, PyTorchJobs).

Where the host of an event comes from (``event_host``), in order:

1. the involved object is a Node (``node/node017``): that node;
2. the event's source names a host (core/v1 ``source.host``; the ``SOURCE`` column of
   ``kubectl get events -o wide`` prints ``component, host``): that host, unless the
   component is a cluster-level controller or the scheduler (their "instance" is the
   controller's own machine, not the node the event is about);
3. the message names the node: the scheduler's ``Scheduled`` event ("Successfully assigned
   ns/pod to node017", kubernetes pkg/scheduler/schedule_one.go) and ``Preempted`` event
   ("Preempted by pod <uid> on node node017", pkg/scheduler/framework/preemption).
"""

from __future__ import annotations

import re
from datetime import tzinfo
from typing import Any

from parsers.timeutil import TimeError, parse_iso

_ASSIGNED = re.compile(r"^Successfully assigned \S+/\S+ to (\S+)$")
_ON_NODE = re.compile(r" on node (\S+?)\.?$")
#: components whose "instance" is not the node the event is about
_CLUSTER_COMPONENT = re.compile(r"(?:scheduler|controller|operator|manager)$", re.IGNORECASE)

GPU_RESOURCE = "nvidia.com/gpu"


def event_host(kind: str | None, name: str | None, component: str | None,
               instance: str | None, reason: str | None, message: str | None) -> str | None:
    """The node an event is about (see the module docstring for the order)."""
    if kind and kind.lower() == "node" and name:
        return name
    if instance and not (component and _CLUSTER_COMPONENT.search(component)):
        return instance
    if message:
        if reason == "Scheduled":
            m = _ASSIGNED.match(message)
            if m:
                return m.group(1)
        elif reason == "Preempted":
            m = _ON_NODE.search(message)
            if m:
                return m.group(1)
    return None


def split_source(cell: str) -> tuple[str | None, str | None]:
    """``kubelet, node017`` -> (kubelet, node017); ``default-scheduler`` -> (it, None).

    kubectl's formatEventSource joins component and host with ", " (kubernetes
    pkg/printers/internalversion/printers.go)."""
    if not cell:
        return None, None
    comp, sep, inst = cell.partition(", ")
    return (comp or None), (inst if sep and inst else None)


def ts_of(value: Any, tz: tzinfo) -> tuple[int | None, str]:
    """An RFC 3339 API timestamp (``2024-05-01T12:00:00Z``, MicroTime with fraction) ->
    (epoch us, flag); (None, "missing") when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None, "missing"
    try:
        return parse_iso(value, tz)
    except TimeError:
        return None, "missing"


def first_ts(tz: tzinfo, *values: Any) -> tuple[int | None, str]:
    """The first of ``values`` that is a readable timestamp."""
    for v in values:
        us, flag = ts_of(v, tz)
        if us is not None:
            return us, flag
    return None, "missing"


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty dict (tolerates nulls/odd shapes)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    """An integer field (also accepts a numeric string such as a resource quantity "8")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def pod_gpus(pod_spec: dict[str, Any]) -> int | None:
    """GPUs a pod asks for: sum over its containers of ``nvidia.com/gpu`` limits (requests
    when no limit; for extended resources Kubernetes requires them equal). None if no
    container names the resource."""
    total: int | None = None
    for c in as_list(pod_spec.get("containers")):
        res = as_dict(as_dict(c).get("resources"))
        n = as_int(as_dict(res.get("limits")).get(GPU_RESOURCE))
        if n is None:
            n = as_int(as_dict(res.get("requests")).get(GPU_RESOURCE))
        if n is not None:
            total = (total or 0) + n
    return total


def object_kind(item: dict[str, Any], list_kind: str | None) -> str | None:
    """Kind of one item of a List (``Event``, ``Pod``, ``PyTorchJob`` ...). kubectl sets
    ``kind`` on every item; when it is missing, fall back to the list's kind
    (``PodList`` -> ``Pod``) or to the event shape (``involvedObject`` / ``regarding``)."""
    kind = as_str(item.get("kind"))
    if kind:
        return kind
    if list_kind and list_kind.endswith("List") and list_kind != "List":
        return list_kind[:-4]
    if "involvedObject" in item or "regarding" in item:
        return "Event"
    return None
