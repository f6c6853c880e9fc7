-- attempts_inferred: attempts reconstructed from training output when the logs hold no usable
-- scheduler records (lower fidelity: an attempt runs from its first to its last stamped line),
-- or for output files no scheduler record accounts for. Input: inferred_sessions (the pieces
-- of those files, inferred_sessions.sql): each session with progress is an attempt.
-- * Nodes: for output saved per pod (kubectl logs POD), the nodes of the pods of the same job
--   (POD minus its -master-N/-worker-N suffix) as the scheduler last placed them before the
--   attempt ended ("Successfully assigned NS/POD to NODE" events). The pod is the file's
--   name (POD.log), or, for the kubelet's own files, NS_POD_UID/CONTAINER/N.log under
--   /var/log/pods and POD_NS_CONTAINER-ID.log under /var/log/containers (silent.pod_of).
WITH numbered AS (
    SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY start) - 1 AS execution,
           count(*) OVER (PARTITION BY job_id) AS executions,
           regexp_extract(
               CASE WHEN regexp_matches(file, '/[^/_]+_[^/_]+_[0-9a-f-]{36}/[^/]+/\d+\.log$')
                    THEN regexp_extract(file, '/[^/_]+_([^/_]+)_[0-9a-f-]{36}/[^/]+/\d+\.log$', 1)
                    WHEN regexp_matches(file, '/[^/_]+_[^/_]+_[^/]+-[0-9a-f]{64}\.log$')
                    THEN regexp_extract(file, '/([^/_]+)_[^/_]+_[^/]+-[0-9a-f]{64}\.log$', 1)
                    ELSE regexp_extract(file, '([^/]+?)(\.log)?$', 1) END,
               '^(.+)-(?:master|worker|launcher|trainer)-\d+$', 1) AS job_prefix
    FROM inferred_sessions
    WHERE has_progress AND start IS NOT NULL
),
placements AS (
    SELECT ts, host AS node, regexp_extract(device, '^[Pp]od/(.+)$', 1) AS pod
    FROM events
    WHERE kind = 'k8s_event' AND code = 'Scheduled' AND host IS NOT NULL AND ts IS NOT NULL
),
attempt_nodes AS (
    SELECT n.job_id, n.execution, list_sort(list(DISTINCT last_node)) AS nodes
    FROM numbered n
    JOIN (
        SELECT n2.job_id, n2.execution, p.pod, arg_max(p.node, p.ts) AS last_node
        FROM numbered n2
        JOIN placements p
          ON n2.job_prefix <> '' AND starts_with(p.pod, n2.job_prefix || '-')
         AND p.ts <= n2."end"
        GROUP BY n2.job_id, n2.execution, p.pod
    ) pn ON pn.job_id = n.job_id AND pn.execution = n.execution
    GROUP BY n.job_id, n.execution
)
SELECT
    CASE WHEN executions > 1 THEN n.job_id || '#' || n.execution ELSE n.job_id END AS attempt,
    n.job_id, n.execution, coalesce(m.run, nullif(n.job_prefix, ''), 'run') AS run,
    'inferred' AS source, NULL::VARCHAR AS name, NULL::VARCHAR AS state,
    NULL::VARCHAR AS reason, NULL::INTEGER AS exit_code, NULL::INTEGER AS signal,
    NULL::TIMESTAMPTZ AS submit, n.start, n."end", coalesce(an.nodes, []::VARCHAR[]) AS nodes,
    len(coalesce(an.nodes, []::VARCHAR[]))::INTEGER AS node_count, NULL::INTEGER AS gpus,
    NULL::INTEGER AS restart_count, 'progress' AS fidelity
FROM numbered n
LEFT JOIN attempt_nodes an ON an.job_id = n.job_id AND an.execution = n.execution
LEFT JOIN run_map m ON m.job_id = n.job_id
ORDER BY run, n.start, attempt
