-- attempts_inferred: attempts reconstructed from training output when the logs hold no usable
-- scheduler records (lower fidelity: an attempt runs from its first to its last stamped line),
-- or for output files no scheduler record accounts for. Input: inference_files (the job-output
-- files to read).
-- * Each output file (per job id) is cut into incarnations where a start shows: a checkpoint
--   load (or Megatron's "will not load any checkpoints"), cut at that line; or, with no load
--   since the last progress line, Megatron's "[before the start of training step]", cut at
--   the largest time gap after the last progress line (the time the job was down), else right
--   after that line. Error lines of the previous incarnation stay with it.
-- * Nodes: for output saved per pod (kubectl logs POD), the nodes of the pods of the same job
--   (POD minus its -master-N/-worker-N suffix) as the scheduler last placed them before the
--   attempt ended ("Successfully assigned NS/POD to NODE" events).
WITH ev AS (
    SELECT file, line_no, ts, kind, coalesce(job_id, file) AS job_id
    FROM events
    WHERE source = 'joblog' AND file IN (SELECT file FROM inference_files)
),
marks AS (
    -- every checkpoint load opens a start (each start loads once, also one that dies before
    -- training); a "[before the start of training step]" does when no load came since the
    -- last progress line (a run that starts from scratch prints none)
    SELECT m.file, m.line_no, m.kind,
           coalesce((SELECT max(p.line_no) FROM ev p WHERE p.file = m.file
                     AND p.kind = 'iteration' AND p.line_no < m.line_no), 0) AS last_iter,
           (SELECT max(l.line_no) FROM ev l WHERE l.file = m.file AND l.kind = 'ckpt_load'
                     AND l.line_no < m.line_no) AS last_load
    FROM ev m
    WHERE m.kind IN ('train_start', 'ckpt_load')
),
opens AS (
    SELECT * FROM marks
    WHERE kind = 'ckpt_load' OR last_load IS NULL OR last_load < last_iter
),
gaps AS (
    SELECT file, line_no, ts,
           epoch(ts) - epoch(lag(ts) OVER (PARTITION BY file ORDER BY line_no)) AS gap
    FROM ev
    WHERE ts IS NOT NULL
),
starts AS (
    -- a load is cut at itself; a bare training-start mark at the largest time gap since the
    -- last progress line (the time the job was down), else right after that line
    SELECT o.file,
           CASE WHEN o.kind = 'ckpt_load' THEN any_value(o.line_no)
                ELSE coalesce(arg_max(g.line_no, g.gap) FILTER (g.gap IS NOT NULL),
                              any_value(o.last_iter) + 1) END AS start_line
    FROM opens o
    LEFT JOIN gaps g ON g.file = o.file AND g.line_no > o.last_iter AND g.line_no <= o.line_no
    GROUP BY o.file, o.line_no, o.kind
),
bounds AS (
    SELECT DISTINCT file, start_line FROM starts
    UNION
    SELECT DISTINCT file, 1 FROM ev
),
seg AS (
    SELECT e.*, b.start_line AS incarnation
    FROM ev e ASOF JOIN bounds b ON e.file = b.file AND e.line_no >= b.start_line
),
att AS (
    SELECT job_id, file, incarnation,
           min(ts) FILTER (ts IS NOT NULL) AS start, max(ts) FILTER (ts IS NOT NULL) AS "end",
           bool_or(kind = 'iteration') AS has_progress
    FROM seg
    GROUP BY job_id, file, incarnation
),
numbered AS (
    SELECT *, row_number() OVER (PARTITION BY job_id ORDER BY start) - 1 AS execution,
           count(*) OVER (PARTITION BY job_id) AS executions,
           regexp_extract(regexp_extract(file, '([^/]+?)(\.log)?$', 1),
                          '^(.+)-(?:master|worker|launcher|trainer)-\d+$', 1) AS job_prefix
    FROM att
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
