-- evidence: every classified event that may explain an interruption.
-- Inputs: interruptions_base (attempt, run, job_id, executions (how many executions share the
-- job id), nodes, start, end, last_progress, next_start, first_in_run, end_inferred),
-- failure_events (the classified_events of a failure category: rootcause.failure_events).
-- Parameters: $before_s, $after_s (the evidence window), $skew_s (node lines' allowance after
-- the end), $tol_s (--skew-tolerance: extra allowance on node windows, both ends).
-- Clock skew (skew.py, table host_skew): a node line's time is corrected by its host's
-- measured offset (host clock - scheduler clock, per source), and node windows widen by the
-- offset's bound.
-- An event is evidence for an attempt when
--   * it is in the attempt's own output or scheduler record (same job id -- the line's own when
--     the records know it, else the job its output file is linked to; for Kubernetes pod
--     incarnations "<uid>#<n>" the pod uid; for attempts inferred from an output file, that
--     file), or it carries no job id and happened on one of the attempt's nodes (kernel,
--     slurmd, node-level scheduler lines), and
--   * its time is inside the window, which is
--       - for the job's own lines: from max(last progress - before, start) -- a requeued
--         job's earlier executions write to the same output and records (Slurm logs the
--         requeue of the previous one seconds before this one starts) -- to
--         min(end + after, start of the next attempt) -- scheduler records of the job are
--         often written after its end (sacct End, slurmctld), but the next execution's are not
--         this one's;
--       - for node lines: from last progress - before (a node can be broken before the job
--         fails), but not before the start of an attempt that follows another (what a node
--         logged before belongs to the previous attempt or the gap: a node set DOWN for the
--         last failure must not be blamed again), nor, for the controller's node lines (DOWN,
--         not responding), before the start of any attempt (a node set DOWN before the job
--         was given it had been returned to service), to min(end + skew, next start): a fault a
--         node logs after the job was gone cannot have ended it;
--     (without progress, the attempt's start stands for its last progress; an attempt inferred
--     from its output ended some time after its last line, so node lines count up to the
--     job's own limit, end + after), and
--   * its category is a failure category (not none/progress/checkpoint/unclassified).
-- A job-output line with no time at all (an .err file that never printed a stamp) counts at
-- the attempt's end when its job id had a single execution, so there is no doubt whose it is.
-- So does, at the latest time it can have (the next own stamp of its file, or the end), one
-- whose inherited stamp falls before the window while that next stamp does not: an inherited
-- stamp is only a lower bound (stderr split from stdout keeps the last stamp stderr printed,
-- Megatron's start-of-training line, hours before the watchdog lines that follow it).
-- Ranking: the most specific evidence is the root cause, the earliest among equals (then file
-- and line for a stable order); the rest are listed as symptoms.
WITH known AS (SELECT DISTINCT job_id FROM attempts_linked),
-- one row per event and linked job (rid names it); the five ways an event can belong to an
-- interruption are equi-joins (the nodes unnested) whose union is exactly the pairs one join
-- with their OR gives (an OR join is a nested loop over every pair)
ev AS MATERIALIZED (
    SELECT c.* REPLACE (c.ts - to_microseconds(CAST(round(coalesce(sk.offset_s, 0) * 1e6)
                                                     AS BIGINT)) AS ts),
           coalesce(k.job_id, l.job_id) AS link_job,
           coalesce(sk.bound_s, 0) + $tol_s AS tol_s,
           row_number() OVER () AS rid
    FROM failure_events c
    LEFT JOIN known k ON k.job_id = c.job_id
    LEFT JOIN output_links l ON k.job_id IS NULL AND l.file = c.file
    LEFT JOIN host_skew sk ON c.job_id IS NULL AND sk.host = c.host AND sk.source = c.source
),
stale AS (
    -- inherited stamps: the next stamp of their own in the same file (the latest they can be;
    -- an ASOF join, not a range join over every line of a long job log)
    SELECT e.rid, o.ts AS next_own
    FROM (SELECT rid, file, line_no FROM ev WHERE ts_flag = 'inherited') e
    ASOF JOIN (SELECT file, line_no, ts FROM events
               WHERE ts_flag IN ('exact', 'assumed_tz') AND file IS NOT NULL) o
      ON o.file = e.file AND o.line_no > e.line_no
),
pairs AS (
    SELECT e.rid, i.attempt FROM interruptions_base i JOIN ev e ON e.link_job = i.job_id
    UNION
    SELECT e.rid, i.attempt FROM interruptions_base i JOIN ev e ON e.job_id = i.job_id
    UNION
    SELECT e.rid, i.attempt FROM interruptions_base i
      JOIN ev e ON e.job_id = split_part(i.job_id, '#', 1)
    UNION
    SELECT e.rid, i.attempt FROM interruptions_base i
      JOIN ev e ON e.job_id IS NULL AND e.file = i.job_id
    UNION
    -- node lines only near the attempt: a bound (a second wider) that every window below
    -- implies, so that a node's lines do not pair with every attempt that ran on it
    SELECT e.rid, n.attempt
    FROM (SELECT attempt, lo, hi, unnest(nodes) AS host FROM (
              SELECT attempt, nodes, coalesce(last_progress, start) - to_seconds($before_s + 1)
                     AS lo, "end" + to_seconds($after_s + 1) AS hi FROM interruptions_base)) n
    JOIN (SELECT rid, host, ts, ts - to_seconds(greatest(tol_s, 0)) AS ts_less_tol FROM ev
          WHERE job_id IS NULL AND link_job IS NULL) e
      ON e.host = n.host AND e.ts >= n.lo AND e.ts_less_tol <= n.hi
),
scoped AS (
    SELECT i.attempt, i.run, i.start, i."end", i.last_progress, i.next_start, i.first_in_run,
           i.end_inferred,
           e.* EXCLUDE (rid),
           CASE WHEN e.ts_flag = 'inherited' AND i.executions = 1
                     AND (e.job_id IS NOT NULL OR e.link_job IS NOT NULL OR e.file = i.job_id)
                     AND e.ts < greatest(coalesce(i.last_progress, i.start)
                                         - to_seconds($before_s), i.start)
                     AND coalesce(st.next_own, 'infinity'::TIMESTAMPTZ)
                         >= greatest(coalesce(i.last_progress, i.start)
                                     - to_seconds($before_s), i.start)
                THEN least(coalesce(st.next_own, i."end"), i."end")
                ELSE coalesce(e.ts, i."end") END AS when_ts,
           CASE WHEN e.job_id IS NOT NULL OR e.link_job IS NOT NULL OR e.file = i.job_id
                THEN 'job' ELSE 'node' END AS scope
    FROM pairs p
    JOIN interruptions_base i ON i.attempt = p.attempt
    JOIN ev e ON e.rid = p.rid
    LEFT JOIN stale st ON st.rid = p.rid
    WHERE e.ts IS NOT NULL OR (coalesce(e.link_job, e.job_id) IS NOT NULL
                               AND i.executions = 1)
),
matched AS (
    SELECT attempt, run, event_id, when_ts AS ts, host, source, kind, code, category, mode,
           specificity, rule_id, message, file, line_no, scope
    FROM scoped
    WHERE when_ts >= CASE WHEN scope = 'job'
                     THEN greatest(coalesce(last_progress, start) - to_seconds($before_s),
                                   start)
                     WHEN NOT first_in_run OR source = 'slurmctld'
                     THEN greatest(coalesce(last_progress, start) - to_seconds($before_s),
                                   start - to_seconds(tol_s))
                     ELSE coalesce(last_progress, start) - to_seconds($before_s) END
      AND when_ts <= least(coalesce(next_start, 'infinity'::TIMESTAMPTZ),
                      "end" + to_seconds(CASE WHEN scope = 'job' OR end_inferred
                                              THEN $after_s
                                              ELSE least($after_s, $skew_s) + tol_s END))
)
-- ties (same specificity and time) go to the line that names a host, then to a log line over
-- a scheduler record, and only then to the file's name: the sacct row and Slurm's banner of one
-- NODE_FAIL tie, and which file sorted first decided the node (fault probe M1)
SELECT *,
       row_number() OVER (PARTITION BY attempt
                          ORDER BY specificity DESC, ts, host IS NULL,
                                   source IN ('sacct', 'sacct_json', 'scontrol'), file, line_no) AS rank_in_attempt,
       CASE WHEN row_number() OVER (PARTITION BY attempt
                                    ORDER BY specificity DESC, ts, host IS NULL,
                                   source IN ('sacct', 'sacct_json', 'scontrol'), file, line_no) = 1
            THEN 'cause' ELSE 'symptom' END AS role
FROM matched
ORDER BY run, attempt, rank_in_attempt
