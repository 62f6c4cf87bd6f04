select 'tellers = branches = history' as name,
       t = b and b = h as ok,
       format('tellers %s, branches %s, history %s', t, b, h) as detail
from (select (select coalesce(sum(tbalance), 0) from all_tellers) as t,
             (select coalesce(sum(bbalance), 0) from all_branches) as b,
             (select coalesce(sum(delta), 0) from pgbench_history) as h) s;

-- pgbench draws the teller independently of the branch (at scale > 1 a teller's deltas land
-- on every branch), so a branch is checked against the history rows naming it, as a teller is.
-- The history is summed once (materialized), never once per branch or teller.
with h as materialized (select bid, sum(delta) as total from pgbench_history group by bid)
select 'each branch = its history' as name,
       coalesce(bool_and(b.bbalance = coalesce(h.total, 0)), true) as ok,
       coalesce(string_agg(format('branch %s: %s vs history %s', b.bid, b.bbalance, coalesce(h.total, 0)), '; ')
                filter (where b.bbalance <> coalesce(h.total, 0)), '') as detail
from all_branches b
left join h using (bid);

with h as materialized (select tid, sum(delta) as total from pgbench_history group by tid)
select 'each teller = its history' as name,
       coalesce(bool_and(t.tbalance = coalesce(h.total, 0)), true) as ok,
       coalesce(string_agg(format('teller %s: %s vs history %s', t.tid, t.tbalance, coalesce(h.total, 0)), '; ')
                filter (where t.tbalance <> coalesce(h.total, 0)), '') as detail
from all_tellers t
left join h using (tid);
