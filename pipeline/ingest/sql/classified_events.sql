-- classified_events: every event with the rule-table row that classifies it.
-- Rule choice per event: the rule with more conditions (code and pattern) wins, then the one
-- with higher specificity, then the earlier one in load order (ord). Events no rule matches
-- get category 'unclassified'.
WITH matches AS (
    SELECT e.event_id, r.id AS rule_id, r.category, r.mode, r.specificity,
           r.scales_with,
           row_number() OVER (PARTITION BY e.event_id
                              ORDER BY r.n_conditions DESC, r.specificity DESC, r.ord) AS pick
    FROM events e
    JOIN rules r
      ON r.kind = e.kind
     AND (r.source = '*' OR r.source = e.source)
     AND (r.code IS NULL OR regexp_full_match(coalesce(e.code, ''), r.code))
     AND (r.pattern IS NULL OR regexp_matches(coalesce(e.message, ''), r.pattern))
)
SELECT e.*, m.rule_id,
       coalesce(m.category, 'unclassified') AS category,
       coalesce(m.mode, 'none') AS mode,
       coalesce(m.specificity, 0) AS specificity,
       coalesce(m.scales_with, 'none') AS scales_with
FROM events e
LEFT JOIN matches m ON m.event_id = e.event_id AND m.pick = 1
ORDER BY e.file, e.line_no, e.kind
