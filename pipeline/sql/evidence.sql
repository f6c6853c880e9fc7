-- evidence: every classified event that may explain an interruption.
-- Inputs: interruptions_base (attempt, run, job_id, nodes, start, end, last_progress),
-- classified_events. Parameters: $before_s, $after_s (the evidence window, seconds).
-- An event is evidence for an attempt when
--   * it is in the attempt's own output or scheduler record (same job id; for Kubernetes pod
--     incarnations "<uid>#<n>" the pod uid), or it carries no job id and happened on one of
--     the attempt's nodes (kernel, slurmd, node-level scheduler lines), and
--   * its time is inside [last progress - before, end + after] (without progress: from the
--     attempt's start - before); node-level lines (no job id) only up to end + $skew_s: a
--     fault logged by a node after the job was already gone cannot have ended it (the
--     allowance is for clock skew between hosts), while scheduler records of the job itself
--     are often written later (sacct End, slurmctld completion), and
--   * its category is a failure category (not none/progress/checkpoint/unclassified).
-- Ranking: the most specific evidence is the root cause, the earliest among equals (then file
-- and line for a stable order); the rest are listed as symptoms.
WITH ev AS (
    SELECT *
    FROM classified_events
    WHERE ts IS NOT NULL
      AND category NOT IN ('none', 'progress', 'checkpoint', 'unclassified')
),
matched AS (
    SELECT i.attempt, i.run, e.event_id, e.ts, e.host, e.source, e.kind, e.code, e.category,
           e.mode, e.specificity, e.rule_id, e.message, e.file, e.line_no,
           CASE WHEN e.job_id IS NOT NULL OR e.file = i.job_id THEN 'job' ELSE 'node' END AS scope
    FROM interruptions_base i
    JOIN ev e
      ON e.ts >= coalesce(i.last_progress, i.start) - to_seconds($before_s)
     AND e.ts <= i."end" + to_seconds(CASE WHEN e.job_id IS NULL
                                           THEN least($after_s, $skew_s) ELSE $after_s END)
     AND (e.job_id = i.job_id
          OR e.job_id = split_part(i.job_id, '#', 1)
          OR (e.job_id IS NULL AND e.file = i.job_id)
          OR (e.job_id IS NULL AND list_contains(i.nodes, e.host)))
)
SELECT *,
       row_number() OVER (PARTITION BY attempt
                          ORDER BY specificity DESC, ts, file, line_no) AS rank_in_attempt,
       CASE WHEN row_number() OVER (PARTITION BY attempt
                                    ORDER BY specificity DESC, ts, file, line_no) = 1
            THEN 'cause' ELSE 'symptom' END AS role
FROM matched
ORDER BY run, attempt, rank_in_attempt
