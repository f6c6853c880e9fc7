"""Kubernetes documents: ``kubectl get events|pods|pytorchjobs -o json`` (or ``-o yaml``).

All three parsers read any of these objects, so a mixed List (``kubectl get
pods,pytorchjobs -o json``) loses nothing: every item is dispatched on its ``kind`` and its
rows carry the source of their object type (k8s_events_json, k8s_pod, pytorchjob). They
differ in their sniffing, each claiming only its own shape. Accounting: one unit per item;
items of other kinds (Service, ConfigMap ...) are recognised objects without signal
(NOISE); items that are not objects, or have no kind, are UNPARSED.

Events (core/v1 Event and events.k8s.io/v1 Event, k8s.io/api core/v1/types.go and
events/v1/types.go): ``ts`` = lastTimestamp (deprecatedLastTimestamp), else
series.lastObservedTime, else eventTime, else firstTimestamp (deprecatedFirstTimestamp),
else the object's metadata.creationTimestamp, flag ``exact``; an event with none of them is
kept untimed and the file's note counts them; ``value`` = count (series.count, count,
deprecatedCount; 1 when unset, as kubectl prints it); job_id = the uid of
the involved object when it is a Pod or a PyTorchJob (a pod's *attempts* are
``<uid>#<n>``); host per ``k8s_common.event_host``; device = ``<kind>/<name>`` as
``kubectl get events`` prints OBJECT. An event that repeated (count > 1: the kubelet's
event correlator folds a crash-looping container's ``Started``/``BackOff`` into one Event)
also gives a ``k8s_event_first`` row at its first occurrence (firstTimestamp, or eventTime
for an events.k8s.io series), same code, device and count: the repeats lie between the two.

``-o yaml`` is the same object tree (kubectl marshals the JSON to YAML): read with PyYAML's
safe loader, several ``---`` documents as one list; a value YAML would read as a timestamp
(kubectl quotes them, a hand-edited file may not) is turned back into its RFC 3339 text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any, ClassVar

from parsers.base import EVENT, NOISE, UNPARSED, DocumentParser, Parser
from parsers.filecheck import DocumentError
from parsers.k8s_common import as_dict, as_int, as_str, event_host, first_ts, object_kind
from parsers.k8s_pod import handle_pod
from parsers.k8s_pytorchjob import handle_pytorchjob

_TRAINING_JOB_KINDS = {"PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob"}


def _kind_re(kind: str) -> re.Pattern[str]:
    return re.compile(rf'"kind"\s*:\s*"{kind}"|^[ \t]*(?:- )?kind: ["\']?{kind}["\']?[ \t]*$',
                      re.M)


_EVENT_KIND = _kind_re("Event")
_LIST_KIND = _kind_re("List")
_EMPTY_LIST = re.compile(r'"items"\s*:\s*(?:\[\s*\]|null)')
_POD_KIND = _kind_re("Pod")
_PTJ_KIND = _kind_re("PyTorchJob")
_YAML_START = re.compile(r"(?:---[ \t]*\n)?(?:apiVersion|kind|items|metadata):")
_SPACE = re.compile(r"\s*")


def _is_json(head: str) -> bool:
    """A JSON document (an object, or an array that is empty or of objects), or the YAML
    kubectl prints for one. Not a log whose lines begin with ``[`` and a stamp (slurmctld's
    ``[2024-05-01T...]``): their 64 KiB heads were searched by every pattern here."""
    at = _skip_space(head, 0)
    first = head[at: at + 1]
    if first == "[":
        nxt = _skip_space(head, at + 1)
        return head[nxt: nxt + 1] in ("{", "]")
    return first == "{" or _YAML_START.match(head, at) is not None


def _skip_space(text: str, at: int) -> int:
    m = _SPACE.match(text, at)
    return at if m is None else m.end()


def _has(head: str, key: str) -> bool:
    """``key`` as a JSON member name or a YAML mapping key."""
    return f'"{key}"' in head or re.search(rf"^[ \t]*(?:- )?{key}:", head, re.M) is not None


def _event_shape(head: str) -> bool:
    return _has(head, "involvedObject") or _has(head, "regarding")


def load_document(data: bytes) -> Any:
    """``_load``: a JSON document, or its YAML form (``sacct --yaml`` too)."""
    return _load(data)


def _load(data: bytes) -> Any:
    """The document: JSON, or YAML (several documents: a list of them)."""
    if data.lstrip()[:1] in (b"{", b"["):
        return json.loads(data)
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        docs = [d for d in yaml.load_all(data, Loader=loader) if d is not None]
    except yaml.YAMLError as e:
        raise DocumentError(f"not valid YAML either: {str(e).splitlines()[0]}") from None
    return _texts(docs[0] if len(docs) == 1 else docs)


def _texts(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _texts(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_texts(x) for x in v]
    if isinstance(v, datetime):
        return v.isoformat().replace("+00:00", "Z")
    if isinstance(v, date):
        return v.isoformat()
    return v


def handle_event(p: Parser, ev: dict[str, Any], rec: int) -> int:
    """One core/v1 or events.k8s.io/v1 Event -> a ``k8s_event`` row."""
    new = "regarding" in ev or str(ev.get("apiVersion", "")).startswith("events.k8s.io")
    if new:
        obj = as_dict(ev.get("regarding"))
        message = as_str(ev.get("note"))
        src = as_dict(ev.get("deprecatedSource"))
        last, first = ev.get("deprecatedLastTimestamp"), ev.get("deprecatedFirstTimestamp")
        count = ev.get("deprecatedCount")
        component = as_str(src.get("component")) or as_str(ev.get("reportingController"))
    else:
        obj = as_dict(ev.get("involvedObject"))
        message = as_str(ev.get("message"))
        src = as_dict(ev.get("source"))
        last, first = ev.get("lastTimestamp"), ev.get("firstTimestamp")
        count = ev.get("count")
        component = as_str(src.get("component")) or as_str(ev.get("reportingComponent"))
    series = as_dict(ev.get("series"))
    # the object's own creation: the first occurrence, where a tool dropped the rest
    created = as_dict(ev.get("metadata")).get("creationTimestamp")
    ts, flag = first_ts(p.ctx.tz, last, series.get("lastObservedTime"), ev.get("eventTime"),
                        first, created)
    if ts is None and isinstance(p, K8sJsonParser):  # for the file's note
        p.untimed += 1
    # kubectl prints 1 for a singleton: events.k8s.io leaves the count 0 or unset
    n = as_int(series.get("count")) or as_int(count) or 1
    instance = as_str(src.get("host")) or as_str(ev.get("reportingInstance"))
    kind = as_str(obj.get("kind"))
    name = as_str(obj.get("name"))
    reason = as_str(ev.get("reason"))
    text = (message or "").strip()
    host = event_host(kind, name, component, instance, reason, text)
    device = f"{kind.lower()}/{name}" if kind and name else (kind.lower() if kind else None)
    job_id = as_str(obj.get("uid")) if kind == "Pod" or kind in _TRAINING_JOB_KINDS else None
    where = {"host": host, "host_from": "record"} if host else p.host_fields(None)
    fmt = "events.k8s.io/v1" if new else "core/v1"
    p.events.add(ts=ts, ts_flag=flag, kind="k8s_event", code=reason, job_id=job_id,
                 value=float(n), device=device, message=text,
                 line_no=rec, source="k8s_events_json", format=fmt, **where)
    if n > 1:
        t0, f0 = first_ts(p.ctx.tz, ev.get("eventTime") if series else None, first)
        if t0 is not None and ts is not None and t0 < ts:
            p.events.add(ts=t0, ts_flag=f0, kind="k8s_event_first", code=reason,
                         job_id=job_id, value=float(n), device=device, message=text,
                         line_no=rec, source="k8s_events_json", format=fmt, **where)
    return EVENT


_HANDLERS: dict[str, Callable[[Parser, dict[str, Any], int], int]] = {
    "Event": handle_event,
    "Pod": handle_pod,
    "PyTorchJob": handle_pytorchjob,
}


class K8sJsonParser(DocumentParser):
    """Shared reading of a Kubernetes JSON document (a List or a single object)."""

    #: events read with no time at all (``handle_event``), named in the file's note
    untimed = 0

    def parse_document(self, data: bytes) -> None:
        doc = _load(data)
        if isinstance(doc, dict) and isinstance(doc.get("items"), list):
            items: list[Any] = doc["items"]
            list_kind = as_str(doc.get("kind"))
        elif isinstance(doc, dict) and "items" in doc and doc["items"] is None \
                and str(doc.get("kind") or "").endswith("List"):
            items, list_kind = [], None  # an empty List some clients print as null
        elif isinstance(doc, list):  # (YAML documents that are Lists: their items)
            items = [x for d in doc for x in (
                d["items"] if isinstance(d, dict) and isinstance(d.get("items"), list)
                else [d])]
            list_kind = None
        else:
            items, list_kind = [doc], None
        for rec, item in enumerate(items, start=1):
            status, label = self._item(item, list_kind, rec)
            self.acct.note(status, rec, label)
        if self.untimed:
            self.file_note = (f"{self.untimed:,} event(s) carry no time (no lastTimestamp, "
                              "eventTime, firstTimestamp or metadata.creationTimestamp): kept "
                              "without one, so no attempt boundary, interruption or cause is "
                              "taken from them")

    def _item(self, item: Any, list_kind: str | None, rec: int) -> tuple[int, str]:
        if not isinstance(item, dict):
            return UNPARSED, f"item {rec}: not an object: {str(item)[:200]}"
        kind = object_kind(item, list_kind)
        meta = as_dict(item.get("metadata"))
        label = f"{kind} {meta.get('namespace') or '-'}/{meta.get('name') or '?'}"
        if kind is None:
            return UNPARSED, f"item {rec}: no kind: {json.dumps(item)[:200]}"
        handler = _HANDLERS.get(kind)
        if handler is None:
            return NOISE, label
        return handler(self, item, rec), label


class K8sEventsJsonParser(K8sJsonParser):
    name: ClassVar[str] = "k8s_events_json"
    description: ClassVar[str] = "kubectl get events -o json (core/v1 and events.k8s.io/v1)"

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """A JSON document with an Event object (kind Event + involvedObject/regarding), or
        kubectl's empty List (``kubectl get events -o json`` with nothing to list: ``"items":
        []``; ``null`` from some clients): nothing to read, and nothing missing."""
        if _is_json(head) and _EVENT_KIND.search(head) and _event_shape(head):
            return 90
        if _is_json(head) and len(head) < 4096 and _EMPTY_LIST.search(head) \
                and _LIST_KIND.search(head):
            return 60
        return 0


class K8sPodParser(K8sJsonParser):
    name: ClassVar[str] = "k8s_pod"
    description: ClassVar[str] = "kubectl get pod(s) -o json: container incarnations as attempts"

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """A JSON document with a Pod object, and no Event or PyTorchJob shape."""
        if not _is_json(head) or not _POD_KIND.search(head) or _event_shape(head):
            return 0
        if _has(head, "pytorchReplicaSpecs"):
            return 0
        if any(_has(head, k) for k in ("containerStatuses", "nodeName", "containers")):
            return 90
        return 40


class PyTorchJobParser(K8sJsonParser):
    name: ClassVar[str] = "pytorchjob"
    description: ClassVar[str] = "Kubeflow PyTorchJob -o json: conditions and the job attempt"

    @classmethod
    def sniff(cls, head: str, path: str) -> int:
        """A JSON document with a PyTorchJob object (kind + pytorchReplicaSpecs)."""
        if not _is_json(head) or not _PTJ_KIND.search(head) or _event_shape(head):
            return 0
        # a Pod's ownerReferences also name kind PyTorchJob: the spec is what tells them apart
        return 90 if _has(head, "pytorchReplicaSpecs") else 0
