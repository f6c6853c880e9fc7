"""Kubernetes sources: the parsers of this family and where each lives.

* ``k8s_events`` (parsers/k8s_events.py): ``kubectl get events`` / ``kubectl events`` tables;
* ``k8s_events_json``, ``k8s_pod``, ``pytorchjob`` (parsers/k8s_json.py, with the object
  readers in k8s_pod.py and k8s_pytorchjob.py): ``kubectl get ... -o json`` documents.

Kinds emitted: ``k8s_event`` (code = event reason), ``pod_terminated`` (code = termination
reason, value = exit code), ``pod_evicted`` (code = pod status / DisruptionTarget reason),
``pytorchjob_condition`` (code = condition type); ATTEMPTS rows from ``k8s_pod`` (one per
container incarnation, job_id ``<pod uid>#<n>``) and ``pytorchjob`` (one per job).
"""

from __future__ import annotations

from parsers.base import Parser
from parsers.k8s_events import K8sEventsParser
from parsers.k8s_json import K8sEventsJsonParser, K8sPodParser, PyTorchJobParser

PARSERS: list[type[Parser]] = [K8sEventsParser, K8sEventsJsonParser, K8sPodParser,
                               PyTorchJobParser]
